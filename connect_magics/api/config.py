"""Configuration definitions, parsing and validation: Kafka's ``ConfigDef`` in Python.

Values are parsed from strings exactly as Kafka does, and error messages carry Kafka's wording,
so that what the REST API and the notebook show matches a Java Connect worker.

Example::

    >>> cd = (ConfigDef()
    ...       .define("topic", Type.STRING, importance=Importance.HIGH, documentation="Topic to write to")
    ...       .define("batch.size", Type.INT, 100, Range.at_least(1)))
    >>> cd.parse({"topic": "lines", "batch.size": "5"})
    {'topic': 'lines', 'batch.size': 5}
    >>> cd.parse({"topic": "lines", "batch.size": "0"})
    Traceback (most recent call last):
    ...
    connect_magics.api.config.ConfigException: Invalid value 0 for configuration batch.size: Value must be at least 1
"""

from __future__ import annotations

import dataclasses
import enum
import math
import re
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol, runtime_checkable

import connect_magics._version as _version

__all__ = [
    "NO_DEFAULT", "CaseInsensitiveValidString", "CompositeValidator", "ConfigDef", "ConfigException",
    "ConfigKey", "ConfigValue", "Importance", "LambdaValidator", "NonEmptyString", "NonNullValidator",
    "Password", "Range", "Recommender", "Type", "ValidList", "ValidString", "Validator", "Width",
    "AbstractConfig", "config_infos", "convert_to_string", "java_double_str", "java_str", "java_str_join",
    "plugin_version",
]


class Type(enum.Enum):
    """The type of a configuration value (Kafka's ``ConfigDef.Type``)."""

    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    INT = "INT"
    SHORT = "SHORT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"
    CLASS = "CLASS"
    PASSWORD = "PASSWORD"

    def __str__(self) -> str:
        return self.value


class Importance(enum.Enum):
    """How much a setting matters (``Importance.HIGH.value == "HIGH"``)."""

    HIGH = "HIGH"
    MEDIUM = "MEDIUM"
    LOW = "LOW"


class Width(enum.Enum):
    """Expected display width of a value in a UI (``Width.NONE.value == "NONE"``)."""

    NONE = "NONE"
    SHORT = "SHORT"
    MEDIUM = "MEDIUM"
    LONG = "LONG"


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()
"""Marks a configuration as required: it has no default value."""


class Password:
    """A secret whose ``str``/``repr`` never reveal it.

    >>> p = Password("s3cret")
    >>> str(p), p.value
    ('[hidden]', 's3cret')
    """

    HIDDEN = "[hidden]"

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __str__(self) -> str:
        return self.HIDDEN

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Password) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)


def _shortest_float32(v: float) -> str:
    """The shortest decimal text that reads back as the same 32-bit float (Java's ``Float.toString`` digits)."""
    try:
        target = struct.unpack("f", struct.pack("f", v))[0]
    except OverflowError:
        return repr(math.copysign(math.inf, v))
    for precision in range(1, 10):
        text = f"{target:.{precision}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == target:
            return text
    return repr(target)


def java_double_str(v: float, float32: bool = False) -> str:
    """Format a float as Java's ``Double.toString`` (or ``Float.toString``): ``1.0``, ``1.0E20``, ``NaN``.

    >>> java_double_str(1e20), java_double_str(12.34, float32=True), java_double_str(100.0)
    ('1.0E20', '12.34', '100.0')
    """
    text = _shortest_float32(v) if float32 else repr(float(v))
    if v != v:
        return "NaN"
    if math.isinf(float(text)):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0 or 1e-3 <= abs(v) < 1e7:
        plain = format(Decimal(text), "f")
        return plain if "." in plain else plain + ".0"
    sign, digits, exponent = Decimal(text).normalize().as_tuple()
    mantissa = "".join(map(str, digits))
    return f"{'-' if sign else ''}{mantissa[0]}.{mantissa[1:] or '0'}E{len(digits) - 1 + int(exponent)}"


def java_str(value: Any) -> str:
    """Format a value as Java's ``String.valueOf`` would (``null``, ``true``, ``[a, b]``, ``1.0E20``).

    >>> java_str([1, True, None])
    '[1, true, null]'
    """
    if value.__class__ is str:  # the common cases, first
        return value
    if value.__class__ is bytes or value.__class__ is int:
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(java_str(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{java_str(k)}={java_str(v)}" for k, v in value.items()) + "}"
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    return str(value)


def java_str_join(values: Sequence[Any], separator: str) -> str:
    """``separator.join(map(java_str, values))``, without a call per value for strings and for plain bytes.

    >>> java_str_join([b"a", b"b c"], "|"), java_str_join(["x", None, 1.0], "|")
    ("b'a'|b'b c'", 'x|null|1.0')
    """
    try:
        return separator.join(values)  # strings, the common case
    except TypeError:
        pass
    if set(map(type, values)) == {bytes}:
        text = bytes_repr_join(values, separator)
        if text is not None:
            return text
    return separator.join(map(java_str, values))


#: The bytes that ``repr`` of a bytes object shows as themselves (printable ASCII but the quote and the backslash).
_BYTES_SHOWN_AS_IS = bytes(range(0x20, 0x7F)).replace(b"'", b"").replace(b"\\", b"")


def bytes_repr_join(values: Sequence[bytes], separator: str) -> str | None:
    """``separator.join(map(repr, values))`` for bytes values that ``repr`` shows as they are (printable ASCII
    but the quote and the backslash) and an ASCII separator, in three passes over the batch; else None.
    A value that is not bytes-like raises TypeError.

    >>> bytes_repr_join([b"a", b"b c"], "|"), bytes_repr_join([b"it's"], "|")
    ("b'a'|b'b c'", None)
    """
    if not values or not separator.isascii():
        return None
    between = b"'" + separator.encode() + b"b'"
    joined = between.join(values)
    # Of the joined bytes, only the separators' may be ones that repr does not show as they are.
    not_shown = len(between.translate(None, _BYTES_SHOWN_AS_IS))
    if len(joined.translate(None, _BYTES_SHOWN_AS_IS)) != (len(values) - 1) * not_shown:
        return None
    return "b'" + joined.decode("ascii") + "'"


def plugin_version() -> str:
    """The version reported by the built-in plugins (connectors, converters, transformations, predicates):
    the package's.

    >>> plugin_version() == _version.__version__
    True
    """
    return _version.__version__


_MISSING: Any = object()


class ConfigException(ValueError):
    """An invalid or missing configuration, worded as Kafka's ``ConfigException``.

    >>> str(ConfigException("x", "abc", "Not a number of type INT"))
    'Invalid value abc for configuration x: Not a number of type INT'
    >>> str(ConfigException("Unknown configuration 'y'"))
    "Unknown configuration 'y'"

    In the single-argument form ``name`` is the whole message.
    """

    def __init__(self, name: str, value: Any = _MISSING, message: str | None = None) -> None:
        self.name = name
        self.reason = message
        if value is _MISSING and message is None:
            self.value = None
            text = name
        else:
            self.value = None if value is _MISSING else value
            text = f"Invalid value {java_str(self.value)} for configuration {name}"
            if message is not None:
                text += f": {message}"
        super().__init__(text)


# --------------------------------------------------------------------------------------------- validators


class Validator:
    """Base of validators: a callable ``(name, value) -> None`` that raises :class:`ConfigException`.

    Any plain function with that signature may be used as a validator too::

        class Port(Validator):
            def ensure_valid(self, name, value):
                if not 0 < value < 65536:
                    raise ConfigException(name, value, "Not a port")
    """

    def ensure_valid(self, name: str, value: Any) -> None:
        raise NotImplementedError

    def __call__(self, name: str, value: Any) -> None:
        self.ensure_valid(name, value)


def _validator_str(v: Callable[[str, Any], None]) -> str:
    return str(v) if isinstance(v, Validator) else getattr(v, "__name__", repr(v))


class Range(Validator):
    """An inclusive numeric range.

    >>> Range.between(1, 10)("n", 11)
    Traceback (most recent call last):
    ...
    connect_magics.api.config.ConfigException: Invalid value 11 for configuration n: Value must be no more than 10
    """

    def __init__(self, min: float | None = None, max: float | None = None) -> None:
        self.min = min
        self.max = max

    @classmethod
    def at_least(cls, min: float) -> Range:
        return cls(min, None)

    @classmethod
    def between(cls, min: float, max: float) -> Range:
        return cls(min, max)

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigException(name, None, "Value must be non-null")
        if self.min is not None and value < self.min:
            raise ConfigException(name, value, f"Value must be at least {java_str(self.min)}")
        if self.max is not None and value > self.max:
            raise ConfigException(name, value, f"Value must be no more than {java_str(self.max)}")

    def __str__(self) -> str:
        lo = "" if self.min is None else f"{java_str(self.min)},"
        hi = "" if self.max is None else f",{java_str(self.max)}"
        return f"[{lo}...{hi}]"


class ValidString(Validator):
    """The value must be one of the given strings (case-sensitive).

    >>> ValidString.in_("a", "b")("mode", "c")
    Traceback (most recent call last):
    ...
    connect_magics.api.config.ConfigException: Invalid value c for configuration mode: String must be one of: a, b
    """

    def __init__(self, valid_strings: Iterable[str]) -> None:
        self.valid_strings = list(valid_strings)

    @classmethod
    def in_(cls, *valid_strings: str) -> ValidString:
        return cls(valid_strings)

    def ensure_valid(self, name: str, value: Any) -> None:
        if value not in self.valid_strings:
            raise ConfigException(name, value, "String must be one of: " + ", ".join(self.valid_strings))

    def __str__(self) -> str:
        return "[" + ", ".join(self.valid_strings) + "]"


class ValidList(Validator):
    """Every element of a LIST value must be one of the given strings.

    >>> ValidList.in_("a", "b")("modes", ["a", "b"])
    """

    def __init__(self, valid_strings: Iterable[str]) -> None:
        self.valid_string = ValidString(valid_strings)

    @classmethod
    def in_(cls, *valid_strings: str) -> ValidList:
        return cls(valid_strings)

    def ensure_valid(self, name: str, value: Any) -> None:
        for item in value or []:
            self.valid_string(name, item)

    def __str__(self) -> str:
        return str(self.valid_string)


def java_hash_set_order(strings: Iterable[str]) -> list[str]:
    """``strings`` in the order a ``java.util.HashSet`` built from them iterates (Kafka's messages list a
    set's members that way): by bucket, ``(h ^ h >>> 16) & (capacity - 1)`` of ``String.hashCode()``.

    >>> java_hash_set_order(["NONE", "ALL"])
    ['ALL', 'NONE']
    """
    unique = list(dict.fromkeys(strings))
    capacity = 16
    while len(unique) > capacity * 0.75:
        capacity *= 2

    def bucket(text: str) -> int:
        h, units = 0, text.encode("utf-16-be")  # String.hashCode() runs over UTF-16 code units
        for i in range(0, len(units), 2):
            h = (31 * h + int.from_bytes(units[i:i + 2], "big")) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)
    return sorted(unique, key=bucket)


class CaseInsensitiveValidString(Validator):
    """Like :class:`ValidString`, ignoring case; errors list the values as Kafka's (a HashSet's order).

    >>> CaseInsensitiveValidString.in_("NONE", "ALL")("errors.tolerance", "all")
    """

    def __init__(self, valid_strings: Iterable[str]) -> None:
        self.valid_strings = java_hash_set_order(s.upper() for s in valid_strings)

    @classmethod
    def in_(cls, *valid_strings: str) -> CaseInsensitiveValidString:
        return cls(valid_strings)

    def ensure_valid(self, name: str, value: Any) -> None:
        if not isinstance(value, str) or value.upper() not in self.valid_strings:
            raise ConfigException(
                name, value, "String must be one of (case insensitive): " + ", ".join(self.valid_strings))

    def __str__(self) -> str:
        return "(case insensitive) [" + ", ".join(self.valid_strings) + "]"


class NonNullValidator(Validator):
    """The value must not be null (``NonNullValidator()("k", None)`` raises)."""

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigException(name, "null", "entry must be non null")

    def __str__(self) -> str:
        return "non-null string"


class NonEmptyString(Validator):
    """A null or non-empty string (``NonEmptyString()("k", "")`` raises "String must be non-empty")."""

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is not None and value == "":
            raise ConfigException(name, value, "String must be non-empty")

    def __str__(self) -> str:
        return "non-empty string"


class LambdaValidator(Validator):
    """A validator from a function and a description.

    >>> def even(name, value):
    ...     if value % 2:
    ...         raise ConfigException(name, value, "Value must be even")
    >>> str(LambdaValidator(even, "even numbers"))
    'even numbers'
    """

    def __init__(self, fn: Callable[[str, Any], None], description: str = "") -> None:
        self.fn = fn
        self.description = description

    def ensure_valid(self, name: str, value: Any) -> None:
        self.fn(name, value)

    def __str__(self) -> str:
        return self.description


class CompositeValidator(Validator):
    """Runs several validators in order; the first failure wins.

    >>> v = CompositeValidator.of(NonEmptyString(), ValidString.in_("a"))
    >>> str(v)
    'non-empty string, [a]'
    """

    def __init__(self, validators: Iterable[Callable[[str, Any], None]]) -> None:
        self.validators = list(validators)

    @classmethod
    def of(cls, *validators: Callable[[str, Any], None]) -> CompositeValidator:
        return cls(validators)

    def ensure_valid(self, name: str, value: Any) -> None:
        for v in self.validators:
            v(name, value)

    def __str__(self) -> str:
        return ", ".join(_validator_str(v) for v in self.validators)


@runtime_checkable
class Recommender(Protocol):
    """Supplies valid values and visibility of a key given the other parsed values.

    Example::

        class ModeRecommender:
            def valid_values(self, name, parsed): return ["bulk", "incrementing"]
            def visible(self, name, parsed): return parsed.get("enabled") is True
    """

    def valid_values(self, name: str, parsed: dict[str, Any]) -> list[Any]: ...

    def visible(self, name: str, parsed: dict[str, Any]) -> bool: ...


# ------------------------------------------------------------------------------------------- definitions


@dataclass
class ConfigKey:
    """The definition of one configuration key (built by :meth:`ConfigDef.define`).

    >>> ConfigDef().define("n", Type.INT, 1).config_keys()["n"].has_default
    True
    """

    name: str
    type: Type
    default: Any = NO_DEFAULT
    validator: Callable[[str, Any], None] | None = None
    importance: Importance = Importance.MEDIUM
    documentation: str = ""
    group: str | None = None
    order_in_group: int = -1
    width: Width = Width.NONE
    display_name: str | None = None
    dependents: list[str] = field(default_factory=list)
    recommender: Recommender | None = None
    internal: bool = False

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


@dataclass
class ConfigValue:
    """The outcome of validating one key: its value, errors, recommended values and visibility.

    >>> ConfigDef().define("n", Type.INT).validate({"n": "2"})
    [ConfigValue(name='n', value=2, recommended_values=[], errors=[], visible=True)]
    """

    name: str
    value: Any = None
    recommended_values: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    visible: bool = True

    def add_error_message(self, message: str) -> None:
        self.errors.append(message)


_JAVA_CLASS = {bool: "java.lang.Boolean", int: "java.lang.Long", float: "java.lang.Double",
               str: "java.lang.String", list: "java.util.ArrayList", tuple: "java.util.ArrayList",
               dict: "java.util.HashMap"}
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?)")
_COMMA = re.compile(r"\s*,\s*")
_INT_BITS = {Type.SHORT: 16, Type.INT: 32, Type.LONG: 64}
_INT_WORDS = {Type.SHORT: "a 16-bit integer (short)", Type.INT: "a 32-bit integer", Type.LONG: "a 64-bit integer (long)"}


def _class_of(value: Any) -> str:
    return _JAVA_CLASS.get(type(value), f"{type(value).__module__}.{type(value).__qualname__}")


def _parse_integer(name: str, value: Any, type_: Type) -> int:
    if isinstance(value, str):
        text = value.strip()
        if not _INTEGER.fullmatch(text):
            raise ConfigException(name, value, f"Not a number of type {type_}")
        number = int(text)
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        raise ConfigException(name, value, f"Expected value to be {_INT_WORDS[type_]}, but it was a {_class_of(value)}")
    bits = _INT_BITS[type_]
    if not -(1 << (bits - 1)) <= number < (1 << (bits - 1)):
        raise ConfigException(name, value, f"Not a number of type {type_}")
    return number


def _parse_double(name: str, value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, str):
        raise ConfigException(name, value, f"Expected value to be a double, but it was a {_class_of(value)}")
    text = value.strip()
    if not _DOUBLE.fullmatch(text):
        raise ConfigException(name, value, "Not a number of type DOUBLE")
    return float(text.rstrip("fFdD").replace("Infinity", "inf")) if "NaN" not in text else float("nan")


def _parse_type(name: str, value: Any, type_: Type) -> Any:
    if value is None:
        return None
    trimmed = value.strip() if isinstance(value, str) else None
    if type_ is Type.BOOLEAN:
        if isinstance(value, bool):
            return value
        if trimmed is not None and trimmed.lower() in ("true", "false"):
            return trimmed.lower() == "true"
        raise ConfigException(name, value, "Expected value to be either true or false")
    if type_ in (Type.STRING, Type.PASSWORD):
        if type_ is Type.PASSWORD and isinstance(value, Password):
            return value
        if trimmed is None:
            raise ConfigException(name, value, f"Expected value to be a string, but it was a {_class_of(value)}")
        return Password(trimmed) if type_ is Type.PASSWORD else trimmed
    if type_ in _INT_BITS:
        return _parse_integer(name, value, type_)
    if type_ is Type.DOUBLE:
        return _parse_double(name, value)
    if type_ is Type.LIST:
        if isinstance(value, (list, tuple)):
            return list(value)
        if trimmed is None:
            raise ConfigException(name, value, "Expected a comma separated list.")
        return _COMMA.split(trimmed) if trimmed else []
    if type_ is Type.CLASS:
        if isinstance(value, type):
            return value
        if trimmed is None:
            raise ConfigException(name, value, "Expected a Class instance or class name.")
        return trimmed
    raise ValueError(f"Unknown type {type_!r}")


def convert_to_string(value: Any, type_: Type | None) -> str | None:
    """A parsed value as Kafka's ``ConfigDef.convertToString`` renders it (lists comma-joined)."""
    if value is None:
        return None
    if type_ is Type.LIST and isinstance(value, (list, tuple)):
        return ",".join(java_str(v) for v in value)
    return java_str(value)


class ConfigDef:
    """An ordered set of :class:`ConfigKey` with Kafka's parsing and validation.

    >>> cd = ConfigDef().define("tasks.max", Type.INT, 1, Range.at_least(1), Importance.HIGH, "Max tasks")
    >>> [v.errors for v in cd.validate({"tasks.max": "0"})]
    [['Invalid value 0 for configuration tasks.max: Value must be at least 1']]
    """

    def __init__(self, base: ConfigDef | None = None) -> None:
        self._keys: dict[str, ConfigKey] = dict(base._keys) if base else {}
        self._groups: list[str] = list(base._groups) if base else []

    def define(self, name: str, type: Type, default: Any = NO_DEFAULT,
               validator: Callable[[str, Any], None] | None = None,
               importance: Importance = Importance.MEDIUM, documentation: str = "",
               group: str | None = None, order_in_group: int = -1, width: Width = Width.NONE,
               display_name: str | None = None, dependents: Iterable[str] = (),
               recommender: Recommender | None = None, *, internal: bool = False) -> ConfigDef:
        """Add a key (chainable). The default is parsed and validated like a user value."""
        type_ = Type(type) if isinstance(type, str) else type
        if default is not NO_DEFAULT:
            default = _parse_type(name, default, type_)
            if validator is not None:
                validator(name, default)
        return self.define_key(ConfigKey(
            name, type_, default, validator, importance, documentation, group, order_in_group, width,
            display_name if display_name is not None else name, list(dependents), recommender, internal))

    def define_internal(self, name: str, type: Type, default: Any = NO_DEFAULT,
                        validator: Callable[[str, Any], None] | None = None,
                        importance: Importance = Importance.LOW, documentation: str = "") -> ConfigDef:
        """Define a key that is left out of generated documentation."""
        return self.define(name, type, default, validator, importance, documentation, internal=True)

    def define_key(self, key: ConfigKey) -> ConfigDef:
        """Add an already built key; a duplicate name raises :class:`ConfigException`."""
        if key.name in self._keys:
            raise ConfigException(f"Configuration {key.name} is defined twice.")
        if key.group is not None and key.group not in self._groups:
            self._groups.append(key.group)
        self._keys[key.name] = key
        return self

    def redefine(self, key: ConfigKey, **changes: Any) -> ConfigDef:
        """Replace a defined key by a copy of ``key`` with ``changes`` (e.g. ``default=``), in its place."""
        if key.name not in self._keys:
            raise ConfigException(f"Configuration {key.name} is not defined.")
        self._keys[key.name] = dataclasses.replace(key, **changes)
        return self

    def config_keys(self) -> dict[str, ConfigKey]:
        """The keys in definition order."""
        return dict(self._keys)

    def names(self) -> list[str]:
        return list(self._keys)

    def groups(self) -> list[str]:
        """Group names in the order they were first used."""
        return list(self._groups)

    def __contains__(self, name: object) -> bool:
        return name in self._keys

    def merge(self, other: ConfigDef) -> ConfigDef:
        """A new definition with this one's keys followed by ``other``'s."""
        merged = ConfigDef(self)
        for key in other._keys.values():
            merged.define_key(key)
        return merged

    def embed(self, prefix: str, group: str, starting_order: int, child: ConfigDef) -> ConfigDef:
        """Add ``child``'s keys under ``prefix`` in ``group`` (how Connect exposes transformation configs)."""
        for order, key in enumerate(child._keys.values(), start=starting_order):
            self.define_key(ConfigKey(
                prefix + key.name, key.type, key.default,
                _EmbeddedValidator(prefix, key.validator) if key.validator else None, key.importance, key.documentation,
                group, order, key.width, key.display_name, [prefix + d for d in key.dependents],
                _PrefixedRecommender(prefix, key.recommender) if key.recommender else None, key.internal))
        return self

    @staticmethod
    def parse_type(name: str, value: Any, type: Type) -> Any:
        """Parse one value as Kafka's ``ConfigDef.parseType`` (strings are trimmed first)."""
        return _parse_type(name, value, type)

    def parse_value(self, key: ConfigKey, value: Any, is_set: bool) -> Any:
        """Parse a value for ``key`` (or take its default when not set), then validate it."""
        if is_set:
            parsed = _parse_type(key.name, value, key.type)
        elif not key.has_default:
            raise ConfigException(f'Missing required configuration "{key.name}" which has no default value.')
        else:
            parsed = key.default
        if key.validator is not None:
            key.validator(key.name, parsed)
        return parsed

    def _undefined_dependents(self) -> list[str]:
        seen = {d: None for k in self._keys.values() for d in k.dependents if d not in self._keys}
        return list(seen)

    def parse(self, props: Mapping[str, Any]) -> dict[str, Any]:
        """Parse and validate every defined key; raises :class:`ConfigException` at the first problem."""
        undefined = self._undefined_dependents()
        if undefined:
            raise ConfigException("Some configurations in are referred in the dependents, but not defined: "
                                  + ",".join(undefined))
        return {k.name: self.parse_value(k, props.get(k.name), k.name in props) for k in self._keys.values()}

    def validate(self, props: Mapping[str, Any]) -> list[ConfigValue]:
        """Validate every key, collecting errors instead of raising (Kafka's ``validateAll``)."""
        values = {name: ConfigValue(name) for name in self._keys}
        for name in self._undefined_dependents():
            values[name] = ConfigValue(name, errors=[f"{name} is referred in the dependents, but not defined."],
                                       visible=False)
        parsed: dict[str, Any] = {}
        for key in self._keys.values():
            cv = values[key.name]
            value = None
            if key.name in props:
                try:
                    value = _parse_type(key.name, props[key.name], key.type)
                except ConfigException as e:
                    cv.add_error_message(str(e))
            elif not key.has_default:
                cv.add_error_message(f'Missing required configuration "{key.name}" which has no default value.')
            else:
                value = key.default
            if key.validator is not None:
                _collect(cv, key.validator, key.name, value)
            cv.value = parsed[key.name] = value
        for key in self._keys.values():
            if key.recommender is not None:
                cv = values[key.name]
                try:
                    cv.recommended_values = list(key.recommender.valid_values(key.name, parsed))
                    cv.visible = bool(key.recommender.visible(key.name, parsed))
                except ConfigException as e:
                    cv.add_error_message(str(e))
        return list(values.values())


def _collect(cv: ConfigValue, validator: Callable[[str, Any], None], name: str, value: Any) -> None:
    try:
        validator(name, value)
    except ConfigException as e:
        cv.add_error_message(str(e))
    except Exception as e:  # a validator not written for this value's type: report, never raise
        cv.add_error_message(str(ConfigException(name, value, str(e) or type(e).__name__)))


class _EmbeddedValidator(Validator):
    """An embedded key's validator, called with the key's own name (Kafka's ``ConfigDef.embeddedValidator``):
    messages name ``renames``, not ``transforms.<alias>.renames``."""

    def __init__(self, prefix: str, inner: Callable[[str, Any], None]) -> None:
        self.prefix, self.inner = prefix, inner

    def ensure_valid(self, name: str, value: Any) -> None:
        self.inner(name[len(self.prefix):] if name.startswith(self.prefix) else name, value)

    def __str__(self) -> str:
        return _validator_str(self.inner)


class _PrefixedRecommender:
    def __init__(self, prefix: str, inner: Recommender) -> None:
        self.prefix, self.inner = prefix, inner

    def _unprefixed(self, parsed: dict[str, Any]) -> dict[str, Any]:
        n = len(self.prefix)
        return {k[n:]: v for k, v in parsed.items() if k.startswith(self.prefix)}

    def valid_values(self, name: str, parsed: dict[str, Any]) -> list[Any]:
        return self.inner.valid_values(name[len(self.prefix):], self._unprefixed(parsed))

    def visible(self, name: str, parsed: dict[str, Any]) -> bool:
        return self.inner.visible(name[len(self.prefix):], self._unprefixed(parsed))


# ---------------------------------------------------------------------------------------- REST rendering


def _key_info(key: ConfigKey) -> dict[str, Any]:
    return {
        "name": key.name,
        "type": key.type.value,
        "required": not key.has_default,
        "default_value": convert_to_string(key.default, key.type) if key.has_default else None,
        "importance": key.importance.value,
        "documentation": key.documentation,
        "group": key.group,
        "order": key.order_in_group,
        "width": key.width.value,
        "display_name": key.display_name,
        "dependents": list(key.dependents),
    }


def _value_info(cv: ConfigValue, type_: Type | None) -> dict[str, Any]:
    rec_type = Type.STRING if type_ is Type.LIST else type_
    return {
        "name": cv.name,
        "value": convert_to_string(cv.value, type_),
        "recommended_values": [convert_to_string(v, rec_type) for v in cv.recommended_values],
        "errors": list(cv.errors),
        "visible": cv.visible,
    }


def config_infos(connector_class_name: str, config_def: ConfigDef, values: list[ConfigValue]) -> dict[str, Any]:
    """Kafka Connect's ``ConfigInfos`` JSON (the body of ``PUT /connector-plugins/{p}/config/validate``).

    As in ``AbstractHerder.generateResult``: values of keys the definition lacks come first with a null
    ``definition``; every defined key follows in definition order (``value`` null if not validated).
    Passwords render as ``[hidden]``.

    >>> cd = ConfigDef().define("a", Type.INT, 1)
    >>> config_infos("X", cd, cd.validate({}))["configs"][0]["value"]["value"]
    '1'
    """
    keys = config_def.config_keys()
    by_name = {cv.name: cv for cv in values}
    configs = [{"definition": None, "value": _value_info(cv, None)} for cv in values if cv.name not in keys]
    configs += [{"definition": _key_info(k), "value": _value_info(by_name[n], k.type) if n in by_name else None}
                for n, k in keys.items()]
    error_count = sum(len(cv.errors) for cv in values)
    return {"name": connector_class_name, "error_count": error_count, "groups": config_def.groups(),
            "configs": configs}


# ------------------------------------------------------------------------------------------ AbstractConfig


class AbstractConfig:
    """Parsed configuration: the original properties plus typed values (Kafka's ``AbstractConfig``).

    >>> cfg = AbstractConfig(ConfigDef().define("n", Type.INT, 1), {"n": "3", "x.y": "z"})
    >>> cfg.get("n"), cfg.originals_with_prefix("x.")
    (3, {'y': 'z'})
    """

    def __init__(self, definition: ConfigDef, originals: Mapping[str, Any]) -> None:
        for k in originals:
            if not isinstance(k, str):
                raise ConfigException(k, originals[k], "Key must be a string.")
        self.definition = definition
        self._originals = dict(originals)
        self._values = definition.parse(self._originals)

    def get(self, name: str) -> Any:
        if name not in self._values:
            raise ConfigException(f"Unknown configuration '{name}'")
        return self._values[name]

    def get_string(self, name: str) -> str | None:
        return self.get(name)

    def get_int(self, name: str) -> int | None:
        return self.get(name)

    def get_long(self, name: str) -> int | None:
        return self.get(name)

    def get_double(self, name: str) -> float | None:
        return self.get(name)

    def get_boolean(self, name: str) -> bool | None:
        return self.get(name)

    def get_list(self, name: str) -> list[Any] | None:
        return self.get(name)

    def get_password(self, name: str) -> Password | None:
        return self.get(name)

    def values(self) -> dict[str, Any]:
        return dict(self._values)

    def originals(self, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return {**self._originals, **(overrides or {})}

    def originals_strings(self) -> dict[str, str]:
        """The originals, which must all be strings (Kafka raises otherwise)."""
        for k, v in self._originals.items():
            if not isinstance(v, str):
                raise TypeError(f"Non-string value found in original settings for key {k}: {java_str(v)}")
        return dict(self._originals)

    def originals_with_prefix(self, prefix: str, strip: bool = True) -> dict[str, Any]:
        """Originals whose key starts with ``prefix``, with the prefix removed unless ``strip`` is False."""
        return {(k[len(prefix):] if strip else k): v for k, v in self._originals.items()
                if k.startswith(prefix) and len(k) > len(prefix)}

    def values_with_prefix_override(self, prefix: str) -> dict[str, Any]:
        """Parsed values where ``prefix``-ed originals override the unprefixed ones (parsed if defined)."""
        result = dict(self._values)
        keys = self.definition.config_keys()
        for k, v in self.originals_with_prefix(prefix).items():
            key = keys.get(k) or keys.get(k[k.find(".") + 1:])
            if key is not None:
                result[k] = self.definition.parse_value(key, v, True)
        return result

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._originals == other._originals  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._originals)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._values!r})"

