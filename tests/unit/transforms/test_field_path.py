"""Field paths (KIP-821), as Kafka's FieldPathNotationTest and SingleFieldPathTest check them."""

from __future__ import annotations

import pytest

from connect_magics.api.config import ConfigException
from connect_magics.api.data import INT32_SCHEMA, SchemaBuilder, Struct
from connect_magics.transforms.field import FieldSyntaxVersion, SingleFieldPath

pytestmark = pytest.mark.unit
V1, V2 = FieldSyntaxVersion.V1, FieldSyntaxVersion.V2


@pytest.mark.parametrize("path", ["foo.bar.baz", "foo`bar`", "foo.`bar.baz`"])
def test_v1_is_one_step(path: str) -> None:
    assert SingleFieldPath(path, V1).steps == (path,)


@pytest.mark.parametrize("path, steps", [
    ("..", ("", "", "")), ("foo..", ("foo", "", "")), (".bar.", ("", "bar", "")), ("..baz", ("", "", "baz")),
    ("", ()), ("foobarbaz", ("foobarbaz",)), ("foo.bar.baz", ("foo", "bar", "baz")),
    ("foo`bar`baz", ("foo`bar`baz",)),
    ("`foo.bar.baz`", ("foo.bar.baz",)), ("foo.`bar.baz`", ("foo", "bar.baz")), ("`foo.bar`.baz", ("foo.bar", "baz")),
    ("foo.`bar`.baz", ("foo", "bar", "baz")),
    ("foo.``bar.baz`", ("foo", "`bar.baz")), ("foo.`bar.baz``", ("foo", "bar.baz`")),
    ("foo.`ba`r.baz`", ("foo", "ba`r.baz")), ("foo.ba`r.baz", ("foo", "ba`r", "baz")),
    ("foo.``bar``.baz", ("foo", "`bar`", "baz")), ("``foo.bar.baz``", ("`foo.bar.baz`",)),
    ("foo.`bar\\`.baz`", ("foo", "bar`.baz")), ("foo.`bar.`baz`", ("foo", "bar.`baz")),
    ("foo.`bar\\`.`baz`", ("foo", "bar`.`baz")), ("foo.`bar\\\\`.\\`baz`", ("foo", "bar\\`.\\`baz")),
])
def test_v2_steps(path: str, steps: tuple[str, ...]) -> None:
    assert SingleFieldPath(path, V2).steps == steps


@pytest.mark.parametrize("path, position", [("`foo.bar.baz", 0), ("foo.`bar.baz", 4), ("foo.bar.`baz", 8),
                                            ("foo.bar.`baz\\`", 8)])
def test_v2_incomplete_backticks(path: str, position: int) -> None:
    with pytest.raises(ConfigException) as e:
        SingleFieldPath(path, V2)
    assert str(e.value) == (f"Incomplete backtick pair in path: [{path}], consider adding a backslash before "
                            f"backtick at position {position} to escape it")


def test_values_from_structs_and_maps() -> None:
    inner = SchemaBuilder.struct().field("bar", INT32_SCHEMA).build()
    outer = SchemaBuilder.struct().field("foo", inner).build()
    value = Struct(outer).put("foo", Struct(inner).put("bar", 42))
    path = SingleFieldPath("foo.bar", V2)
    assert path.field_from(outer).schema == INT32_SCHEMA and path.value_from(value) == 42
    assert path.value_from({"foo": {"bar": 42}}) == 42
    assert SingleFieldPath("foo.nope", V2).field_from(outer) is None
    assert SingleFieldPath("foo.nope.x", V2).value_from({"foo": {}}) is None
    assert SingleFieldPath("foo.bar", V1).value_from({"foo.bar": 1}) == 1
