"""``.proto`` source to a ``FileDescriptorProto``, for schemas a registry keeps as text (what Confluent's Java
serializers register) and cannot serve as a descriptor (Apicurio's ``format=serialized`` gives neither base64
nor intact bytes).

It reads what a registered schema holds: ``syntax``, ``package``, ``import``, ``option``, messages (fields with
labels and options, ``map<K, V>``, ``oneof``, nested messages and enums, ``reserved``, ``extensions``) and enums;
services and ``extend`` blocks are skipped, proto2 groups and editions are refused. Type names stay as written:
the descriptor pool resolves them. Field options kept: ``default``, ``json_name``, ``packed``, ``deprecated`` and
Confluent's ``(confluent.field_meta)`` parameters.

>>> f = parse_proto('syntax = "proto3"; package p; message A { map<string, int32> my_tags = 1; optional int64 n = 2; }')
>>> [(x.name, x.type_name, x.proto3_optional) for x in f.message_type[0].field]
[('my_tags', 'MyTagsEntry', False), ('n', '', True)]
>>> f.message_type[0].nested_type[0].options.map_entry, [o.name for o in f.message_type[0].oneof_decl]
(True, ['_n'])
"""

from __future__ import annotations

import re
from typing import Any

from google.protobuf import descriptor_pb2

from connect_magics.api.errors import DataException

__all__ = ["parse_proto"]

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {"double": _F.TYPE_DOUBLE, "float": _F.TYPE_FLOAT, "int64": _F.TYPE_INT64, "uint64": _F.TYPE_UINT64,
            "int32": _F.TYPE_INT32, "fixed64": _F.TYPE_FIXED64, "fixed32": _F.TYPE_FIXED32, "bool": _F.TYPE_BOOL,
            "string": _F.TYPE_STRING, "bytes": _F.TYPE_BYTES, "uint32": _F.TYPE_UINT32,
            "sfixed32": _F.TYPE_SFIXED32, "sfixed64": _F.TYPE_SFIXED64, "sint32": _F.TYPE_SINT32,
            "sint64": _F.TYPE_SINT64}
_LABELS = {"optional": _F.LABEL_OPTIONAL, "required": _F.LABEL_REQUIRED, "repeated": _F.LABEL_REPEATED}
_TOKEN = re.compile(r"""
    (?P<space>\s+|//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<number>-?(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))
  | (?P<ident>\.?[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
  | (?P<symbol>[{}\[\]()<>;=,:.\-+])
""", re.S | re.X)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f",
            "v": "\v", "?": "?"}


class _Tokens:
    def __init__(self, text: str) -> None:
        self.items: list[tuple[str, str, int]] = []
        position = 0
        while position < len(text):
            match = _TOKEN.match(text, position)
            if match is None:
                raise DataException(f"Invalid .proto text at line {text.count(chr(10), 0, position) + 1}: "
                                    f"{text[position:position + 20]!r}")
            kind = match.lastgroup or ""
            if kind != "space":
                self.items.append((kind, match.group(), text.count("\n", 0, position) + 1))
            position = match.end()
        self.at = 0

    def peek(self, ahead: int = 0) -> str:
        index = self.at + ahead
        return self.items[index][1] if index < len(self.items) else ""

    def next(self) -> str:
        if self.at >= len(self.items):
            raise DataException("Invalid .proto text: unexpected end")
        self.at += 1
        return self.items[self.at - 1][1]

    def kind(self) -> str:
        return self.items[self.at][0] if self.at < len(self.items) else ""

    def expect(self, token: str) -> None:
        line = self.items[self.at][2] if self.at < len(self.items) else "end"
        found = self.next() if self.at < len(self.items) else ""
        if found != token:
            raise DataException(f"Invalid .proto text at line {line}: expected {token!r}, found {found!r}")

    def accept(self, token: str) -> bool:
        if self.peek() == token:
            self.at += 1
            return True
        return False

    def ident(self) -> str:
        if self.at >= len(self.items):
            raise DataException("Invalid .proto text: unexpected end")
        if self.kind() != "ident":
            line = self.items[self.at][2] if self.at < len(self.items) else "end"
            raise DataException(f"Invalid .proto text at line {line}: expected a name, found {self.peek()!r}")
        return self.next()

    def string(self) -> str:
        parts = []
        while self.kind() == "string":
            parts.append(_unquote(self.next()))
        if not parts:
            raise DataException(f"Invalid .proto text: expected a string, found {self.peek()!r}")
        return "".join(parts)

    def skip_block(self) -> None:
        """Skip a ``{ ... }`` block (its opening brace next)."""
        self.expect("{")
        depth = 1
        while depth:
            token = self.next()
            depth += token == "{"
            depth -= token == "}"

    def skip_statement(self) -> None:
        """Skip to the end of a statement (``;`` outside braces)."""
        depth = 0
        while True:
            token = self.next()
            depth += token == "{"
            depth -= token == "}"
            if token == ";" and depth == 0:
                return


def _unquote(token: str) -> str:
    body = token[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
            octal = re.match(r"[0-7]{1,3}", body[i + 1:])
            if octal:
                out.append(chr(int(octal.group(), 8)))
                i += 1 + len(octal.group())
                continue
            if nxt in "xX":
                hexa = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2:])
                if hexa:
                    out.append(chr(int(hexa.group(), 16)))
                    i += 2 + len(hexa.group())
                    continue
        out.append(ch)
        i += 1
    return "".join(out)


def parse_proto(text: str, name: str = "default") -> descriptor_pb2.FileDescriptorProto:
    """The file descriptor of ``.proto`` source (see the module docstring for what is read)."""
    tokens = _Tokens(text)
    file = descriptor_pb2.FileDescriptorProto(name=name)
    syntax = "proto2"
    while tokens.peek():
        word = tokens.next()
        if word == "syntax":
            tokens.expect("=")
            syntax = tokens.string()
            tokens.expect(";")
        elif word == "edition":
            raise DataException("Protobuf editions are not supported in .proto text schemas")
        elif word == "package":
            file.package = tokens.ident().lstrip(".")
            tokens.expect(";")
        elif word == "import":
            kind = tokens.peek()
            if kind in ("public", "weak"):
                tokens.next()
            path = tokens.string()
            if kind == "public":
                file.public_dependency.append(len(file.dependency))
            file.dependency.append(path)
            tokens.expect(";")
        elif word == "option":
            tokens.skip_statement()
        elif word == "message":
            _message(tokens, file.message_type.add(), syntax)
        elif word == "enum":
            _enum(tokens, file.enum_type.add())
        elif word in ("service", "extend"):
            tokens.ident()
            tokens.skip_block()
        elif word == ";":
            continue
        else:
            raise DataException(f"Invalid .proto text: unexpected {word!r}")
    if syntax != "proto2":
        file.syntax = syntax
    return file


def _message(tokens: _Tokens, message: descriptor_pb2.DescriptorProto, syntax: str) -> None:
    message.name = tokens.ident()
    tokens.expect("{")
    synthetic: list[descriptor_pb2.FieldDescriptorProto] = []
    while not tokens.accept("}"):
        word = tokens.peek()
        if word == "message":
            tokens.next()
            _message(tokens, message.nested_type.add(), syntax)
        elif word == "enum":
            tokens.next()
            _enum(tokens, message.enum_type.add())
        elif word in ("option", "reserved", "extensions"):
            tokens.skip_statement()
        elif word == "extend":
            tokens.next()
            tokens.ident()
            tokens.skip_block()
        elif word == "oneof":
            tokens.next()
            index = len(message.oneof_decl)
            message.oneof_decl.add(name=tokens.ident())
            tokens.expect("{")
            while not tokens.accept("}"):
                if tokens.peek() == "option":
                    tokens.skip_statement()
                    continue
                _field(tokens, message, syntax, None).oneof_index = index
        elif word == ";":
            tokens.next()
        else:
            field = _field(tokens, message, syntax, tokens.next() if word in _LABELS else None)
            if field.proto3_optional:
                synthetic.append(field)
    for field in synthetic:
        field.oneof_index = len(message.oneof_decl)
        message.oneof_decl.add(name="_" + field.name)


def _enum(tokens: _Tokens, enum: descriptor_pb2.EnumDescriptorProto) -> None:
    enum.name = tokens.ident()
    tokens.expect("{")
    while not tokens.accept("}"):
        word = tokens.peek()
        if word in ("option", "reserved"):
            tokens.skip_statement()
            continue
        if word == ";":
            tokens.next()
            continue
        value = enum.value.add(name=tokens.ident())
        tokens.expect("=")
        value.number = int(tokens.next(), 0)
        if tokens.accept("["):
            while tokens.next() != "]":
                pass
        tokens.expect(";")


def _field(tokens: _Tokens, message: descriptor_pb2.DescriptorProto, syntax: str,
           label: str | None) -> descriptor_pb2.FieldDescriptorProto:
    if tokens.peek() == "group":
        raise DataException("proto2 groups are not supported in .proto text schemas")
    if tokens.peek() == "map" and tokens.peek(1) == "<":
        tokens.next()
        tokens.expect("<")
        key_type = tokens.ident()
        tokens.expect(",")
        value_type = tokens.ident()
        tokens.expect(">")
        name = tokens.ident()
        entry = message.nested_type.add(name=_camel(name) + "Entry")
        entry.options.map_entry = True
        for entry_name, number, type_name in (("key", 1, key_type), ("value", 2, value_type)):
            _set_type(entry.field.add(name=entry_name, number=number, label=_F.LABEL_OPTIONAL), type_name)
        field = message.field.add(name=name, label=_F.LABEL_REPEATED, type_name=entry.name)
    else:
        type_name = tokens.ident()
        field = message.field.add(name=tokens.ident())
        _set_type(field, type_name)
        field.label = _LABELS[label] if label else _F.LABEL_OPTIONAL  # type: ignore[assignment]
        if label == "optional" and syntax == "proto3":
            field.proto3_optional = True
    tokens.expect("=")
    field.number = int(tokens.next(), 0)
    if tokens.accept("["):
        _field_options(tokens, field)
    tokens.expect(";")
    return field


def _set_type(field: descriptor_pb2.FieldDescriptorProto, type_name: str) -> None:
    if type_name in _SCALARS:
        field.type = _SCALARS[type_name]  # type: ignore[assignment]
    else:
        field.type_name = type_name  # message or enum: the pool resolves it


def _camel(name: str) -> str:
    """protoc's map entry name: ``my_tags`` -> ``MyTags``."""
    parts = name.split("_")
    return "".join(p[:1].upper() + p[1:] for p in parts if p)


def _field_options(tokens: _Tokens, field: descriptor_pb2.FieldDescriptorProto) -> None:
    while True:
        option = _option_name(tokens)
        tokens.expect("=")
        value = _value(tokens)
        if option == "default":
            field.default_value = value if isinstance(value, str) else str(value).lower() \
                if isinstance(value, bool) else str(value)
        elif option == "json_name":
            field.json_name = str(value)
        elif option == "packed":
            field.options.packed = value is True
        elif option == "deprecated":
            field.options.deprecated = value is True
        elif option.startswith("(confluent.field_meta)"):
            _field_meta(field, option, value)
        if not tokens.accept(","):
            break
    tokens.expect("]")


def _option_name(tokens: _Tokens) -> str:
    parts = []
    while tokens.peek() not in ("=", ""):
        parts.append(tokens.next())
    return "".join(parts)


def _value(tokens: _Tokens) -> Any:
    """A constant, or a text-format aggregate ``{ name: value ... }`` as a dict (repeated names as lists)."""
    if tokens.accept("{"):
        found: dict[str, Any] = {}
        while not tokens.accept("}"):
            key = tokens.next()
            tokens.accept(":")
            item = _value(tokens)
            if key in found:
                found[key] = (found[key] if isinstance(found[key], list) else [found[key]]) + \
                    (item if isinstance(item, list) else [item])
            else:
                found[key] = item
            if not tokens.accept(","):
                tokens.accept(";")
        return found
    if tokens.accept("["):
        items = []
        while not tokens.accept("]"):
            items.append(_value(tokens))
            tokens.accept(",")
        return items
    kind = tokens.kind()
    if kind == "string":
        return tokens.string()
    token = tokens.next()
    if token == "-":
        token = "-" + tokens.next()
    if kind == "number" or token.lstrip("-")[:1].isdigit():
        return float(token) if any(c in token for c in ".eE") and not token.lower().startswith(("0x", "-0x")) \
            else int(token, 0)
    return {"true": True, "false": False}.get(token, token)


def _field_meta(field: descriptor_pb2.FieldDescriptorProto, option: str, value: Any) -> None:
    """``(confluent.field_meta)`` as ``{params: [{key, value}...]}``, ``{params: {key, value}}`` or
    ``.params = {key, value}``: its parameters on the field's options."""
    from confluent_kafka.schema_registry.confluent import meta_pb2

    meta = field.options.Extensions[meta_pb2.field_meta]
    if option.endswith(".params"):
        entries = value
    elif option.endswith(".doc") or option.endswith(".tags"):
        return
    else:
        entries = value.get("params", []) if isinstance(value, dict) else []
        if isinstance(value, dict) and isinstance(value.get("doc"), str):
            meta.doc = value["doc"]
    for entry in entries if isinstance(entries, list) else [entries]:
        if isinstance(entry, dict) and "key" in entry:
            meta.params[str(entry["key"])] = str(entry.get("value", ""))
