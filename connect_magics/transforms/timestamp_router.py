"""``TimestampRouter``: set the topic from the original topic and the record's timestamp (UTC).

Example::

    >>> t = TimestampRouter(); t.configure({"topic.format": "${topic}-${timestamp}", "timestamp.format": "yyyyMM"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "logs", timestamp=1_700_000_000_000)).topic
    'logs-202311'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import AbstractConfig, ConfigDef, ConfigException, Importance, Type
from connect_magics.api.errors import DataException
from connect_magics.api.records import ConnectRecord
from connect_magics.api.transforms import Transformation
from connect_magics.transforms.date_format import SimpleDateFormat

__all__ = ["TimestampRouter"]


class TimestampRouter(Transformation):
    """Topic from ``topic.format`` (``${topic}``, ``${timestamp}``) with the timestamp in ``timestamp.format``
    (a ``java.text.SimpleDateFormat`` pattern, UTC)."""

    CONFIG_DEF = (ConfigDef()
                  .define("topic.format", Type.STRING, "${topic}-${timestamp}", None, Importance.HIGH,
                          "Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as "
                          "placeholders for the topic and timestamp, respectively.")
                  .define("timestamp.format", Type.STRING, "yyyyMMdd", None, Importance.HIGH,
                          "Format string for the timestamp that is compatible with "
                          "<code>java.text.SimpleDateFormat</code>."))

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        config = AbstractConfig(self.CONFIG_DEF, props)
        self.topic_format: str = config.get("topic.format")
        try:
            self.timestamp_format = SimpleDateFormat(config.get("timestamp.format"))
        except ValueError as e:  # Kafka fails on the first record; we fail at once
            raise ConfigException("timestamp.format", config.get("timestamp.format"), str(e)) from e

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        if record.timestamp is None:
            raise DataException(f"Timestamp missing on record: {record}")
        formatted = self.timestamp_format.format(record.timestamp)
        topic = self.topic_format.replace("${topic}", record.topic).replace("${timestamp}", formatted)
        return record.new_record(topic=topic)
