"""Kafka's FileStream connectors: lines of a file to a topic, and records of topics to lines of a file.

Same configuration keys, source partitions/offsets and KIP-875 offset validation as Kafka's
``org.apache.kafka.connect.file`` connectors. A notebook kernel has no standard input, so the source
requires ``file``; the sink writes to standard output when ``file`` is not set, as Kafka's does.

Example::

    >>> c = FileStreamSourceConnector()
    >>> c.start({"file": "/tmp/in.txt", "topic": "lines"})
    >>> c.task_configs(4)
    [{'file': '/tmp/in.txt', 'topic': 'lines'}]
"""

from __future__ import annotations

import itertools
import logging
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import IO, Any

from connect_magics.api.config import ConfigDef, ConfigException, ConfigValue, Importance, Type
from connect_magics.api.connector import SinkConnector, SinkTask, SourceConnector, SourceTask, Task
from connect_magics.api.data import STRING_SCHEMA
from connect_magics.api.errors import ConnectException
from connect_magics.api.records import SinkRecords, SourceRecords, TopicPartition

__all__ = ["FileStreamSinkConnector", "FileStreamSinkTask", "FileStreamSourceConnector", "FileStreamSourceTask"]

log = logging.getLogger(__name__)

FILE_CONFIG = "file"
TOPIC_CONFIG = "topic"
TASK_BATCH_SIZE_CONFIG = "batch.size"
DEFAULT_TASK_BATCH_SIZE = 2000
FILENAME_FIELD = "filename"
POSITION_FIELD = "position"
_PLUS_ONE = (1).__add__  # a C call per line

NO_STDIN_MESSAGE = ("Reading the standard input is not supported: a notebook kernel has none. "
                    "Set 'file' to the path of the file to read")
SINGLE_TOPIC_MESSAGE = "'topic' in FileStreamSourceConnector configuration requires definition of a single topic"


def _plugin_version() -> str:
    from connect_magics.connectors import version

    return version()


def _partition_dict(partition: Any) -> dict[str, Any] | None:
    """A source partition as a dict, whether given as a dict or frozen by :func:`partition_key`."""
    if partition is None:
        return None
    if isinstance(partition, Mapping):
        return dict(partition)
    try:
        return dict(partition)
    except (TypeError, ValueError):
        raise ConnectException(f"Unexpected source partition {partition!r}") from None


# Validators (plain ``(name, value)`` callables) shared by the built-in connectors, worded as Kafka's.


def _non_empty(name: str, value: Any) -> None:
    if value is not None and value == "":
        raise ConfigException(name, value, "String must be non-empty")


def _at_least(minimum: int) -> Callable[[str, Any], None]:
    def validate(name: str, value: Any) -> None:
        if value is None:
            raise ConfigException(name, None, "Value must be non-null")
        if value < minimum:
            raise ConfigException(name, value, f"Value must be at least {minimum}")

    validate.__name__ = f"[{minimum},...]"
    return validate


def _one_of(*allowed: str) -> Callable[[str, Any], None]:
    def validate(name: str, value: Any) -> None:
        if value not in allowed:
            raise ConfigException(name, value, "String must be one of: " + ", ".join(allowed))

    validate.__name__ = "[" + ", ".join(allowed) + "]"
    return validate


def _is_long(value: Any) -> bool:
    """Java's ``instanceof Long`` for a deserialized offset value (``bool`` is not an integer here)."""
    return isinstance(value, int) and not isinstance(value, bool)


# ---------------------------------------------------------------------------------------------- source


def _source_config_def() -> ConfigDef:
    return (
        ConfigDef()
        .define(FILE_CONFIG, Type.STRING, None, None, Importance.HIGH,
                "Source filename. Kafka reads the standard input when it is not specified; a notebook "
                "kernel has none, so it is required here")
        .define(TOPIC_CONFIG, Type.STRING, validator=_non_empty, importance=Importance.HIGH,
                documentation="The topic to publish data to")
        .define(TASK_BATCH_SIZE_CONFIG, Type.INT, DEFAULT_TASK_BATCH_SIZE, None, Importance.LOW,
                "The maximum number of records the source task can read from the file each time it is polled")
    )


def _source_problems(parsed: Mapping[str, Any]) -> list[tuple[str, Any, str]]:
    """What Kafka's definition accepts but this runtime cannot run: ``(key, value, reason)`` triples."""
    problems = []
    if not parsed.get(FILE_CONFIG):
        problems.append((FILE_CONFIG, parsed.get(FILE_CONFIG), NO_STDIN_MESSAGE))
    topic = parsed.get(TOPIC_CONFIG)
    if isinstance(topic, str) and "," in topic:
        problems.append((TOPIC_CONFIG, topic, SINGLE_TOPIC_MESSAGE))
    return problems


def _parse_source_config(props: Mapping[str, Any]) -> dict[str, Any]:
    parsed = _source_config_def().parse(props)
    for key, value, reason in _source_problems(parsed):
        raise ConfigException(key, value, reason)
    return parsed


class FileStreamSourceConnector(SourceConnector):
    """Reads the lines of one file (UTF-8) into a topic, one record per line; a single task.

    Configs: ``file`` (the path), ``topic`` (one topic), ``batch.size`` (max records per poll, 2000).
    Partition ``{"filename": file}``, offset ``{"position": byte position after the line}``.

    Example::

        >>> try:
        ...     FileStreamSourceConnector().start({"file": "/tmp/in.txt", "topic": "a,b"})
        ... except ConfigException as e:
        ...     print(e.name, "|", e.reason)
        topic | 'topic' in FileStreamSourceConnector configuration requires definition of a single topic
    """

    ALIASES: tuple[str, ...] = ("org.apache.kafka.connect.file.FileStreamSourceConnector",)

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return _plugin_version()

    def config_def(self) -> ConfigDef:
        return _source_config_def()

    def validate(self, connector_configs: dict[str, str]) -> list[ConfigValue]:
        """Kafka's validation, plus an error for a missing ``file`` (no stdin) or a comma in ``topic``."""
        values = super().validate(connector_configs)
        by_name = {v.name: v for v in values}
        parsed = {v.name: v.value for v in values}
        for key, value, reason in _source_problems(parsed):
            if not by_name[key].errors:
                by_name[key].add_error_message(str(ConfigException(key, value, reason)))
        return values

    def start(self, props: dict[str, str]) -> None:
        parsed = _parse_source_config(props)
        self._props = dict(props)
        log.info("Starting file source connector reading from %s", parsed[FILE_CONFIG])

    def task_class(self) -> type[Task]:
        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        # Only one input stream makes sense.
        return [dict(self._props)]

    def stop(self) -> None:
        """Nothing to do: the connector does no background monitoring."""

    def alter_offsets(self, connector_config: dict[str, str],
                      offsets: dict[Any, dict[str, Any] | None]) -> bool:
        """KIP-875: accept tombstones for any partition, else ``{"filename": ...}`` → ``{"position": n >= 0}``.

        >>> FileStreamSourceConnector().alter_offsets(
        ...     {"file": "f", "topic": "t"}, {(("filename", "f"),): {"position": 0}})
        True
        """
        config = _source_config_def().parse(connector_config)
        if not config[FILE_CONFIG]:
            raise ConnectException(
                f"Offsets cannot be modified if the '{FILE_CONFIG}' configuration is unspecified. "
                "This is because stdin is used for input and offsets are not tracked.")
        # One source partition at a time (the configured file), but there may be partitions of files
        # that earlier configurations of the connector read.
        for frozen, offset in offsets.items():
            if offset is None:
                # Tombstones are allowed for anything, so that garbage offsets can be cleaned up.
                continue
            if POSITION_FIELD not in offset:
                raise ConnectException(
                    f"Offset objects should either be null or contain the key '{POSITION_FIELD}'")
            position = offset[POSITION_FIELD]
            if not _is_long(position):
                raise ConnectException(
                    f"The value for the '{POSITION_FIELD}' key in the offset is expected to be a Long value")
            if position < 0:
                raise ConnectException(
                    f"The value for the '{POSITION_FIELD}' key in the offset should be a non-negative value")
            partition = _partition_dict(frozen)
            if partition is None:
                raise ConnectException("Partition objects cannot be null")
            if FILENAME_FIELD not in partition:
                raise ConnectException(f"Partition objects should contain the key '{FILENAME_FIELD}'")
        # The task checks on startup whether the position is valid for the configured file.
        return True


class FileStreamSourceTask(SourceTask):
    """Tails a file: every complete line (``\\n``, ``\\r\\n`` or ``\\r``) becomes a record with a string value.

    Resumes from the committed ``{"position": n}`` of partition ``{"filename": file}``. An incomplete last
    line waits for its line terminator. :meth:`poll` returns None when there is nothing new, or while the file
    does not exist yet, after waiting ``IDLE_WAIT_S``, twice that after a second empty poll, and so on up to
    ``MAX_IDLE_WAIT_S`` (Kafka's task waits a second each time): a file being written is read within a
    tenth of a second, and an idle task wakes once a second (each wake-up costs CPU, tens of microseconds
    with hundreds of tasks in a process).

    Example::

        task = FileStreamSourceTask()
        task.initialize(SourceTaskContext(config, offset_reader))
        task.start({"file": "/tmp/in.txt", "topic": "lines"})
        records = task.poll()   # SourceRecords: [SourceRecord(value='first line', source_offset={'position': 11}), ...]
    """

    #: The Kafka class name written as ``task.class``, so that Kafka Connect can run these task configs.
    ALIASES: tuple[str, ...] = ("org.apache.kafka.connect.file.FileStreamSourceTask",)

    IDLE_WAIT_S: float = 0.1
    """How long :meth:`poll` waits when there is no new data before returning None (the first time)."""
    MAX_IDLE_WAIT_S: float = 1.0
    """The longest :meth:`poll` waits, after empty polls in a row."""
    READ_CHUNK: int = 64 * 1024

    def __init__(self) -> None:
        self.filename: str = ""
        self.topic: str = ""
        self.batch_size: int = DEFAULT_TASK_BATCH_SIZE
        self._stream: IO[bytes] | None = None
        self._lines: list[bytes] | list[str] = []  # complete lines read, each with its line terminator, or:
        self._plain = False  # ASCII lines each ended by one "\n", decoded and without it (read in one go)
        self._next = 0  # the first line of _lines not handed out yet
        self._rest = b""  # what follows the last complete line (no terminator yet, or a '\r' maybe before '\n')
        self._position = 0  # byte position in the file after the last line handed out
        self._partition: dict[str, Any] = {}  # {"filename": file}, shared by the records (they are not changed)
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._missing_logged = False
        self._idle_wait: float | None = None  # the next wait of an empty poll (None: IDLE_WAIT_S)

    def version(self) -> str:
        return _plugin_version()

    def start(self, props: dict[str, str]) -> None:
        parsed = _parse_source_config(props)
        self.filename = parsed[FILE_CONFIG]
        self.topic = parsed[TOPIC_CONFIG]
        self.batch_size = parsed[TASK_BATCH_SIZE_CONFIG]
        self._partition = {FILENAME_FIELD: self.filename}
        self._stopping.clear()

    def _open(self) -> bool:
        """Open the file and skip to the committed position; False if the file does not exist yet."""
        try:
            stream = open(self.filename, "rb")  # kept open across polls; closed by stop()
        except FileNotFoundError:
            log.log(logging.DEBUG if self._missing_logged else logging.WARNING,
                    "Couldn't find file %s for FileStreamSourceTask, waiting for it to be created", self.filename)
            self._missing_logged = True
            return False
        except OSError as e:
            raise ConnectException(f"Error while trying to open file {self.filename}: {e}") from e
        try:
            offset = self.context.offset_storage_reader().offset({FILENAME_FIELD: self.filename})
            position = 0
            if offset is not None:
                recorded = offset.get(POSITION_FIELD)
                if recorded is not None and not _is_long(recorded):
                    raise ConnectException("Offset position is the incorrect type")
                if recorded is not None and recorded < 0:
                    raise ConnectException(f"Offset position {recorded} is negative")
                if recorded is not None:
                    log.debug("Found previous offset, trying to skip to file offset %s", recorded)
                    position = recorded
                    stream.seek(position)
        except BaseException:
            stream.close()
            raise
        self._stream, self._position, self._lines, self._next, self._rest = stream, position, [], 0, b""
        self._plain = False
        log.debug("Opened %s for reading at position %d", self.filename, position)
        return True

    def _read_complete_lines(self) -> bool:
        """Read the next chunk of the file into complete lines; False at the end of the file.

        A line ends with ``\n``, ``\r\n`` or ``\r``; a ``\r`` at the end of what was read waits for the next
        byte (it may start ``\r\n``), as an unterminated last line waits for its terminator."""
        assert self._stream is not None
        chunk = self._stream.read(self.READ_CHUNK)
        if not chunk:
            return False
        data = self._rest + chunk
        if b"\r" not in data and data.isascii():  # mostly: decoded and split in one call each, not one a line
            lines = data.decode("ascii").split("\n")
            self._rest = lines.pop().encode("ascii")  # b"" if the data ends with "\n"
            self._lines, self._next, self._plain = lines, 0, True
            return True
        lines = data.splitlines(keepends=True)  # bytes split at \r, \n and \r\n only
        self._rest = b"" if lines[-1].endswith(b"\n") else lines.pop()
        self._lines, self._next, self._plain = lines, 0, False
        return True

    def poll(self) -> SourceRecords | None:
        if self._stopping.is_set():
            return None
        values: list[str] = []
        offsets: list[dict[str, Any] | None] = []
        timestamp = int(time.time() * 1000)  # when this poll read the lines
        with self._lock:
            if not self._stopping.is_set() and (self._stream is not None or self._open()):
                self._read_lines(values, offsets)
        if not values:
            wait = self.IDLE_WAIT_S if self._idle_wait is None else self._idle_wait
            self._idle_wait = min(2 * wait, max(self.MAX_IDLE_WAIT_S, self.IDLE_WAIT_S))
            self._stopping.wait(wait)
            return None
        self._idle_wait = None
        # alike but for their values and offsets: a batch of columns, records made only if read as records
        return SourceRecords(self._partition, offsets, self.topic, STRING_SCHEMA, values, timestamp)

    def _read_lines(self, values: list[str], offsets: list[dict[str, Any] | None]) -> None:
        """Up to ``batch.size`` lines into ``values``, each line's offset (the position after it) into ``offsets``."""
        limit = max(1, self.batch_size)
        while len(values) < limit:
            if self._next >= len(self._lines):
                try:
                    if not self._read_complete_lines():
                        return
                except (OSError, ValueError):  # closed by stop(): let the runtime shut the task down
                    return
                continue
            lines = self._lines[self._next:self._next + limit - len(values)]
            self._next += len(lines)
            if self._plain:  # each line's bytes: its characters and its "\n"
                positions = itertools.accumulate(map(_PLUS_ONE, map(len, lines)), initial=self._position)
                values += lines
            else:
                positions = itertools.accumulate(map(len, lines), initial=self._position)
                values += [line.rstrip(b"\r\n").decode("utf-8", "replace") for line in lines]
            next(positions)
            offsets += [{POSITION_FIELD: position} for position in positions]
            self._position = offsets[-1][POSITION_FIELD]  # type: ignore[index]

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            if self._stream is not None:
                try:
                    self._stream.close()
                except OSError:
                    log.exception("Failed to close FileStreamSourceTask stream")
                self._stream = None


# ------------------------------------------------------------------------------------------------ sink


def _sink_config_def() -> ConfigDef:
    return ConfigDef().define(
        FILE_CONFIG, Type.STRING, None, None, Importance.HIGH,
        "Destination filename. If not specified, the standard output will be used")


class FileStreamSinkConnector(SinkConnector):
    """Appends each record's value as a line to a file (or stdout); topics from ``topics``/``topics.regex``.

    Example::

        >>> c = FileStreamSinkConnector()
        >>> c.start({"file": "/tmp/out.txt", "topics": "lines"})
        >>> len(c.task_configs(2))
        2
    """

    ALIASES: tuple[str, ...] = ("org.apache.kafka.connect.file.FileStreamSinkConnector",)

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return _plugin_version()

    def config_def(self) -> ConfigDef:
        return _sink_config_def()

    def start(self, props: dict[str, str]) -> None:
        parsed = _sink_config_def().parse(props)
        self._props = dict(props)
        log.info("Starting file sink connector writing to %s", parsed[FILE_CONFIG] or "standard output")

    def task_class(self) -> type[Task]:
        return FileStreamSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        """Nothing to do: the connector does no background monitoring."""

    def alter_offsets(self, connector_config: dict[str, str],
                      offsets: dict[TopicPartition, int | None]) -> bool:
        """Nothing to validate: offsets live only in Kafka's consumer group."""
        return True


class FileStreamSinkTask(SinkTask):
    """Appends the value as Java's ``String.valueOf`` prints it and a newline per record (UTF-8); :meth:`flush` fsyncs a regular file.

    Each :meth:`put` is one ``write`` to a file opened in append mode, so that several tasks appending to
    one file do not interleave partial lines.

    Example::

        task = FileStreamSinkTask()
        task.start({"file": "/tmp/out.txt"})
        task.put(SinkRecords([SinkRecord("lines", 0, value="hello")]))
        task.flush({})   # /tmp/out.txt now durably ends with "hello\\n"
    """

    #: The Kafka class name written as ``task.class``, so that Kafka Connect can run these task configs.
    ALIASES: tuple[str, ...] = ("org.apache.kafka.connect.file.FileStreamSinkTask",)

    def __init__(self) -> None:
        self.filename: str | None = None
        self._fd: int | None = None
        self._regular = False  # only a regular file can be fsynced (not /dev/null, a pipe, a terminal)

    def version(self) -> str:
        return _plugin_version()

    def start(self, props: dict[str, str]) -> None:
        self.filename = _sink_config_def().parse(props)[FILE_CONFIG] or None
        if self.filename is not None:
            try:
                self._fd = os.open(self.filename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
                self._regular = stat.S_ISREG(os.fstat(self._fd).st_mode)
            except OSError as e:
                raise ConnectException(
                    f"Couldn't find or create file '{self.filename}' for FileStreamSinkTask: {e}") from e

    def put(self, records: SinkRecords) -> None:
        if not records:
            return
        data = records.joined() + "\n"  # as Java's String.valueOf prints each value
        if self._fd is None:
            sys.stdout.write(data)
            return
        view = memoryview(data.encode("utf-8"))
        try:
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        except OSError as e:
            raise ConnectException(f"Couldn't write to file '{self.filename}': {e}") from e

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        if self._fd is None:
            sys.stdout.flush()
            return
        if not self._regular:  # writes to a device or a pipe are unbuffered: nothing to flush
            return
        try:
            os.fsync(self._fd)
        except OSError as e:
            raise ConnectException(f"Couldn't flush file '{self.filename}': {e}") from e

    def stop(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)
