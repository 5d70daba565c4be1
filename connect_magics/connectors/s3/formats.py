"""What an object holds: Confluent's JsonFormat (JSON lines, optionally gzipped) and ParquetFormat.

>>> JsonFormat("none").extension, JsonFormat("gzip").extension, ParquetFormat("snappy").extension
('.json', '.json.gz', '.snappy.parquet')
>>> JsonFormat("none").encode([SinkRecord("t", 0, value={"a": 1})])
b'{"a":1}\\n'
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Sequence

from connect_magics.api.converters import JsonConverter
from connect_magics.api.errors import ConnectException
from connect_magics.api.records import SinkRecord

__all__ = ["JsonFormat", "ParquetFormat", "RecordFormat"]


class RecordFormat:
    """Turns the records of one object into its bytes; ``extension`` ends the object's name."""

    extension = ""

    def encode(self, records: Sequence[SinkRecord]) -> bytes:
        raise NotImplementedError


class JsonFormat(RecordFormat):
    """One JSON value per line (``\\n``), as Kafka's JsonConverter writes it with schemas disabled."""

    def __init__(self, compression: str) -> None:
        self.gzip = compression == "gzip"
        self.extension = ".json.gz" if self.gzip else ".json"
        self.converter = JsonConverter()
        self.converter.configure({"schemas.enable": "false"}, False)

    def encode(self, records: Sequence[SinkRecord]) -> bytes:
        convert = self.converter.from_connect_data
        data = b"".join([(convert(r.topic, r.value_schema, r.value) or b"null") + b"\n" for r in records])
        return gzip.compress(data) if self.gzip else data


#: Parquet's codec extensions as parquet-mr names them (``CompressionCodecName.getExtension``).
_PARQUET_EXTENSIONS = {"none": "", "snappy": ".snappy", "gzip": ".gz", "zstd": ".zstd"}


class ParquetFormat(RecordFormat):
    """A Parquet file of the records' values; the values need a schema (a STRUCT), as in Confluent's."""

    def __init__(self, codec: str) -> None:
        self.codec = codec
        self.extension = _PARQUET_EXTENSIONS[codec] + ".parquet"

    def encode(self, records: Sequence[SinkRecord]) -> bytes:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from connect_magics.connectors.spark_table.arrow_types import arrow_type, arrow_value, field_column

        schema = records[0].value_schema
        if schema is None or str(schema.type) != "STRUCT":
            r = records[0]
            raise ConnectException(f"format.class: ParquetFormat needs values with a STRUCT schema; record "
                                   f"{r.topic}-{r.kafka_partition}@{r.kafka_offset} has none")
        values = [r.value for r in records]
        try:  # the columns Table.from_pylist would make of each value's row (arrow_value), without the rows
            columns = [field_column(f, values) for f in schema.fields]
        except Exception:
            list(map(arrow_value(schema), values))  # a value that does not convert: raise as row by row did
            raise
        table = pa.Table.from_arrays(columns, schema=pa.schema(list(arrow_type(schema))))
        out = io.BytesIO()
        pq.write_table(table, out, compression=self.codec if self.codec != "none" else None)
        return out.getvalue()
