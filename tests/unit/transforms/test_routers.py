"""TimestampRouter (after Kafka's TimestampRouterTest) and the registry of Kafka's class names."""

from __future__ import annotations

import pytest

from connect_magics.api.errors import DataException
from connect_magics.api.records import SourceRecord
from connect_magics.transforms import BUILTIN_TRANSFORMS, TimestampRouter

pytestmark = pytest.mark.unit


def test_default_format() -> None:
    t = TimestampRouter()
    t.configure({})
    assert t.apply(SourceRecord(None, None, "test", timestamp=1483425001864)).topic == "test-20170103"


def test_custom_format_and_missing_timestamp() -> None:
    t = TimestampRouter()
    t.configure({"topic.format": "${timestamp}/${topic}/${topic}", "timestamp.format": "yyyy-MM-dd HH"})
    assert t.apply(SourceRecord(None, None, "a", timestamp=0)).topic == "1970-01-01 00/a/a"
    with pytest.raises(DataException, match="Timestamp missing on record"):
        t.apply(SourceRecord(None, None, "a"))


KAFKA_TRANSFORMS = ["Cast", "ExtractField", "Flatten", "HeaderFrom", "HoistField", "InsertField", "MaskField",
                    "ReplaceField", "SetSchemaMetadata", "TimestampConverter"]


def test_every_kafka_class_name_is_registered() -> None:
    prefix = "org.apache.kafka.connect.transforms."
    expected = {prefix + n for n in ("DropHeaders", "Filter", "InsertHeader", "RegexRouter", "TimestampRouter",
                                     "ValueToKey")}
    expected |= {f"{prefix}{n}${v}" for n in KAFKA_TRANSFORMS for v in ("Key", "Value")}
    assert set(BUILTIN_TRANSFORMS) == expected
    for name, cls in BUILTIN_TRANSFORMS.items():
        cls().config_def()  # each can be made and describes its config
        if name.endswith("$Key"):
            assert cls._on_key is True


def test_the_package_imports_only_the_api() -> None:
    import ast
    import pathlib

    import connect_magics.transforms as package

    for path in pathlib.Path(package.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("connect_magics"):
                assert node.module.startswith(("connect_magics.api", "connect_magics.transforms",
                                               "connect_magics.java_regex")), f"{path.name}: {node.module}"
