"""ConfigDef parsing, validation and the ConfigInfos JSON, checked against Kafka's wording."""

from __future__ import annotations

import pytest

from connect_magics.api.config import (
    NO_DEFAULT,
    AbstractConfig,
    CaseInsensitiveValidString,
    CompositeValidator,
    ConfigDef,
    ConfigException,
    ConfigValue,
    Importance,
    LambdaValidator,
    NonEmptyString,
    NonNullValidator,
    Password,
    Range,
    Recommender,
    Type,
    ValidList,
    ValidString,
    Width,
    config_infos,
    java_double_str,
    java_str,
)

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------------------------------ exceptions

def test_config_exception_forms():
    e = ConfigException("x", "abc", "Not a number of type INT")
    assert str(e) == "Invalid value abc for configuration x: Not a number of type INT"
    assert (e.name, e.value, e.reason) == ("x", "abc", "Not a number of type INT")
    assert str(ConfigException("Missing thing")) == "Missing thing"
    assert str(ConfigException("x", None, "boom")) == "Invalid value null for configuration x: boom"
    assert str(ConfigException("x", 5)) == "Invalid value 5 for configuration x"
    assert isinstance(e, ValueError)


@pytest.mark.parametrize("value, text", [
    (["a", "b"], "[a, b]"), (True, "true"), (False, "false"), (None, "null"), (1.0, "1.0"), (1e20, "1.0E20"),
    (1e-4, "1.0E-4"), (0.001, "0.001"), (12345678.0, "1.2345678E7"), ({"k": 1}, "{k=1}"), (7, "7"),
])
def test_java_str(value, text):
    assert java_str(value) == text


def test_java_float32_format():
    assert java_double_str(12.34, float32=True) == "12.34"
    assert java_double_str(0.1, float32=True) == "0.1"
    assert java_double_str(float("nan")) == "NaN"
    assert java_double_str(float("-inf")) == "-Infinity"


def test_password_is_hidden():
    p = Password("s3cret")
    assert str(p) == repr(p) == "[hidden]"
    assert p.value == "s3cret"
    assert p == Password("s3cret") and hash(p) == hash(Password("s3cret"))
    assert "s3cret" not in repr({"pw": p})


# ---------------------------------------------------------------------------------------------- parse

@pytest.mark.parametrize("type_, raw, parsed", [
    (Type.BOOLEAN, "true", True), (Type.BOOLEAN, " FALSE ", False), (Type.BOOLEAN, "TrUe", True),
    (Type.STRING, "  padded  ", "padded"),
    (Type.INT, "42", 42), (Type.INT, "-2147483648", -2147483648), (Type.INT, "+7", 7),
    (Type.SHORT, "32767", 32767), (Type.LONG, "9223372036854775807", 9223372036854775807),
    (Type.DOUBLE, "1.5", 1.5), (Type.DOUBLE, "1e3", 1000.0), (Type.DOUBLE, "2", 2.0), (Type.DOUBLE, "1.5d", 1.5),
    (Type.LIST, "a, b ,c", ["a", "b", "c"]), (Type.LIST, "", []), (Type.LIST, "  ", []), (Type.LIST, "a,", ["a", ""]),
    (Type.LIST, ["x", "y"], ["x", "y"]),
    (Type.CLASS, " org.example.Foo ", "org.example.Foo"),
    (Type.INT, 5, 5), (Type.LONG, 5, 5), (Type.DOUBLE, 5, 5.0), (Type.BOOLEAN, True, True),
])
def test_parse_type(type_, raw, parsed):
    assert ConfigDef.parse_type("k", raw, type_) == parsed


def test_parse_type_password_and_none():
    p = ConfigDef.parse_type("pw", " secret ", Type.PASSWORD)
    assert isinstance(p, Password) and p.value == "secret"
    assert ConfigDef.parse_type("k", None, Type.INT) is None


@pytest.mark.parametrize("type_, raw, message", [
    (Type.INT, "abc", "Invalid value abc for configuration k: Not a number of type INT"),
    (Type.INT, "2147483648", "Invalid value 2147483648 for configuration k: Not a number of type INT"),
    (Type.INT, "1.0", "Invalid value 1.0 for configuration k: Not a number of type INT"),
    (Type.INT, "1_000", "Invalid value 1_000 for configuration k: Not a number of type INT"),
    (Type.SHORT, "32768", "Invalid value 32768 for configuration k: Not a number of type SHORT"),
    (Type.LONG, "9223372036854775808", "Invalid value 9223372036854775808 for configuration k: "
                                       "Not a number of type LONG"),
    (Type.DOUBLE, "x1", "Invalid value x1 for configuration k: Not a number of type DOUBLE"),
    (Type.DOUBLE, "inf", "Invalid value inf for configuration k: Not a number of type DOUBLE"),
    (Type.BOOLEAN, "yes", "Invalid value yes for configuration k: Expected value to be either true or false"),
    (Type.BOOLEAN, 1, "Invalid value 1 for configuration k: Expected value to be either true or false"),
    (Type.STRING, 5, "Invalid value 5 for configuration k: Expected value to be a string, but it was a "
                     "java.lang.Long"),
    (Type.INT, True, "Invalid value true for configuration k: Expected value to be a 32-bit integer, but it was a "
                     "java.lang.Boolean"),
    (Type.LIST, 5, "Invalid value 5 for configuration k: Expected a comma separated list."),
])
def test_parse_type_errors(type_, raw, message):
    with pytest.raises(ConfigException) as info:
        ConfigDef.parse_type("k", raw, type_)
    assert str(info.value) == message


def _def() -> ConfigDef:
    return (ConfigDef()
            .define("name", Type.STRING, NO_DEFAULT, NonEmptyString(), Importance.HIGH, "The name", "Common", 0,
                    Width.MEDIUM, "Name")
            .define("tasks.max", Type.INT, 1, Range.at_least(1), Importance.HIGH, "Max tasks", "Common", 1)
            .define("mode", Type.STRING, "bulk", ValidString.in_("bulk", "incrementing"), Importance.MEDIUM,
                    "Mode", "Mode", 0)
            .define("topics", Type.LIST, "", None, Importance.LOW, "Topics")
            .define("password", Type.PASSWORD, None, None, Importance.LOW, "Secret"))


def test_parse_defaults_and_values():
    parsed = _def().parse({"name": " x ", "tasks.max": "3", "topics": "a,b", "password": "p"})
    assert parsed["name"] == "x" and parsed["tasks.max"] == 3 and parsed["mode"] == "bulk"
    assert parsed["topics"] == ["a", "b"] and parsed["password"] == Password("p")
    assert list(parsed) == ["name", "tasks.max", "mode", "topics", "password"]


def test_parse_missing_required():
    with pytest.raises(ConfigException, match='^Missing required configuration "name" which has no default value.$'):
        _def().parse({})


def test_parse_runs_validators():
    with pytest.raises(ConfigException) as info:
        _def().parse({"name": "x", "tasks.max": "0"})
    assert str(info.value) == "Invalid value 0 for configuration tasks.max: Value must be at least 1"
    with pytest.raises(ConfigException, match="String must be one of: bulk, incrementing"):
        _def().parse({"name": "x", "mode": "other"})


def test_define_is_chainable_and_rejects_duplicates():
    cd = ConfigDef().define("a", Type.INT)
    with pytest.raises(ValueError, match="Configuration a is defined twice."):
        cd.define("a", Type.STRING)


def test_define_parses_and_validates_default():
    assert ConfigDef().define("n", Type.INT, "5").config_keys()["n"].default == 5
    with pytest.raises(ConfigException, match="Value must be at least 1"):
        ConfigDef().define("n", Type.INT, 0, Range.at_least(1))


def test_keys_names_groups_merge():
    cd = _def()
    assert cd.names() == ["name", "tasks.max", "mode", "topics", "password"]
    assert cd.groups() == ["Common", "Mode"]
    key = cd.config_keys()["name"]
    assert (key.type, key.importance, key.width, key.display_name, key.has_default) == (
        Type.STRING, Importance.HIGH, Width.MEDIUM, "Name", False)
    assert cd.config_keys()["topics"].display_name == "topics"
    merged = cd.merge(ConfigDef().define("extra", Type.BOOLEAN, False, group="Other"))
    assert merged.names()[-1] == "extra" and merged.groups() == ["Common", "Mode", "Other"]
    assert "extra" not in cd.names()
    with pytest.raises(ValueError):
        cd.merge(ConfigDef().define("name", Type.STRING))


# --------------------------------------------------------------------------------------------- validators

def test_range_messages_and_str():
    with pytest.raises(ConfigException, match="^Invalid value 11 for configuration n: Value must be no more than 10$"):
        Range.between(1, 10)("n", 11)
    with pytest.raises(ConfigException, match="Value must be non-null"):
        Range.at_least(0)("n", None)
    Range.between(1, 10)("n", 10)
    assert str(Range.between(1, 10)) == "[1,...,10]" and str(Range.at_least(0)) == "[0,...]"
    assert str(Range.at_least(0.5)) == "[0.5,...]"


def test_string_validators():
    with pytest.raises(ConfigException, match="String must be non-empty"):
        NonEmptyString()("s", "")
    NonEmptyString()("s", None)
    CaseInsensitiveValidString.in_("none", "all")("t", "ALL")
    with pytest.raises(ConfigException, match=r"String must be one of \(case insensitive\): ALL, NONE"):
        CaseInsensitiveValidString.in_("none", "all")("t", "some")
    ValidList.in_("a", "b")("l", ["a", "b"])
    with pytest.raises(ConfigException, match="^Invalid value c for configuration l: String must be one of: a, b$"):
        ValidList.in_("a", "b")("l", ["a", "c"])
    with pytest.raises(ConfigException, match="^Invalid value null for configuration k: entry must be non null$"):
        NonNullValidator()("k", None)


def test_lambda_and_composite_validators():
    def even(name, value):
        if value % 2:
            raise ConfigException(name, value, "Value must be even")

    composite = CompositeValidator.of(Range.at_least(0), LambdaValidator(even, "even"))
    composite("n", 4)
    with pytest.raises(ConfigException, match="Value must be even"):
        composite("n", 3)
    with pytest.raises(ConfigException, match="Value must be at least 0"):
        composite("n", -2)
    assert str(composite) == "[0,...], even"
    ConfigDef().define("n", Type.INT, 2, even)  # plain functions are validators too


# --------------------------------------------------------------------------------------------- validate

def _by_name(values: list[ConfigValue]) -> dict[str, ConfigValue]:
    return {v.name: v for v in values}


def test_validate_collects_errors_and_never_raises():
    values = _by_name(_def().validate({"tasks.max": "abc", "mode": "x"}))
    assert values["name"].errors == ['Missing required configuration "name" which has no default value.']
    assert values["tasks.max"].errors == [
        "Invalid value abc for configuration tasks.max: Not a number of type INT",
        "Invalid value null for configuration tasks.max: Value must be non-null",
    ]
    assert values["mode"].errors == ["Invalid value x for configuration mode: String must be one of: bulk, incrementing"]
    assert values["topics"].errors == [] and values["topics"].value == []
    assert list(values) == ["name", "tasks.max", "mode", "topics", "password"]


def test_validate_reports_unexpected_validator_failures():
    def even(name, value):
        if value % 2:  # TypeError for None: a validator not written for a failed parse
            raise ConfigException(name, value, "Value must be even")

    values = ConfigDef().define("n", Type.INT, 2, even).validate({"n": "x"})
    assert values[0].errors[0] == "Invalid value x for configuration n: Not a number of type INT"
    assert len(values[0].errors) == 2 and values[0].errors[1].startswith("Invalid value null for configuration n: ")


class _Recommender(Recommender):
    def valid_values(self, name, parsed):
        return ["bulk", "incrementing"] if parsed.get("enabled") else []

    def visible(self, name, parsed):
        return bool(parsed.get("enabled"))


def test_validate_uses_recommenders_and_dependents():
    cd = (ConfigDef()
          .define("enabled", Type.BOOLEAN, False, dependents=["mode", "ghost"])
          .define("mode", Type.STRING, "bulk", recommender=_Recommender()))
    values = _by_name(cd.validate({"enabled": "true"}))
    assert values["mode"].recommended_values == ["bulk", "incrementing"] and values["mode"].visible
    assert values["ghost"].errors == ["ghost is referred in the dependents, but not defined."]
    assert not values["ghost"].visible
    hidden = _by_name(cd.validate({}))["mode"]
    assert not hidden.visible and hidden.recommended_values == []
    with pytest.raises(ConfigException, match="referred in the dependents, but not defined: ghost"):
        cd.parse({})


def test_embed_prefixes_keys():
    child = ConfigDef().define("regex", Type.STRING, NO_DEFAULT, importance=Importance.HIGH)
    parent = ConfigDef().define("name", Type.STRING).embed("transforms.r.", "Transforms: r", 0, child)
    key = parent.config_keys()["transforms.r.regex"]
    assert (key.group, key.order_in_group) == ("Transforms: r", 0)
    assert parent.groups() == ["Transforms: r"]


# ------------------------------------------------------------------------------------------ ConfigInfos

def test_config_infos_json():
    cd = _def()
    values = cd.validate({"name": "c", "password": "secret", "topics": "a,b"}) + [
        ConfigValue("connector.class", "X", errors=["bad class"])]
    info = config_infos("org.example.MyConnector", cd, values)
    assert info["name"] == "org.example.MyConnector"
    assert info["error_count"] == 1
    assert info["groups"] == ["Common", "Mode"]
    first = info["configs"][0]
    assert first == {"definition": None, "value": {"name": "connector.class", "value": "X", "recommended_values": [],
                                                   "errors": ["bad class"], "visible": True}}
    by_name = {c["definition"]["name"]: c for c in info["configs"][1:]}
    assert by_name["name"]["definition"] == {
        "name": "name", "type": "STRING", "required": True, "default_value": None, "importance": "HIGH",
        "documentation": "The name", "group": "Common", "order": 0, "width": "MEDIUM", "display_name": "Name",
        "dependents": [],
    }
    assert list(by_name["name"]["definition"]) == ["name", "type", "required", "default_value", "importance",
                                                   "documentation", "group", "order", "width", "display_name",
                                                   "dependents"]
    assert by_name["tasks.max"]["definition"]["default_value"] == "1"
    assert by_name["tasks.max"]["definition"]["required"] is False
    assert by_name["topics"]["definition"]["default_value"] == ""
    assert by_name["topics"]["value"]["value"] == "a,b"
    assert by_name["password"]["value"]["value"] == "[hidden]"
    assert by_name["password"]["definition"]["type"] == "PASSWORD"
    assert by_name["tasks.max"]["value"] == {"name": "tasks.max", "value": "1", "recommended_values": [],
                                             "errors": [], "visible": True}
    assert "secret" not in repr(info)


def test_config_infos_counts_all_errors():
    cd = _def()
    info = config_infos("C", cd, cd.validate({"tasks.max": "0"}))
    assert info["error_count"] == 2


# -------------------------------------------------------------------------------------- AbstractConfig

def test_abstract_config():
    cd = ConfigDef().define("batch.size", Type.INT, 10).define("topic", Type.STRING, "t")
    cfg = AbstractConfig(cd, {"batch.size": "5", "producer.batch.size": "7", "producer.acks": "all",
                              "producer.override.batch.size": "9"})
    assert cfg.get("batch.size") == 5 and cfg.get_int("batch.size") == 5
    with pytest.raises(ConfigException, match="Unknown configuration 'nope'"):
        cfg.get("nope")
    assert cfg.originals_with_prefix("producer.") == {"batch.size": "7", "acks": "all", "override.batch.size": "9"}
    assert cfg.originals_with_prefix("producer.", strip=False)["producer.acks"] == "all"
    overridden = cfg.values_with_prefix_override("producer.")
    assert overridden["batch.size"] == 7 and overridden["topic"] == "t"
    assert overridden["override.batch.size"] == 9  # secondary prefix, as Kafka does
    assert "acks" not in overridden
    assert cfg.originals()["producer.acks"] == "all"
    with pytest.raises(ConfigException):
        AbstractConfig(cd, {"batch.size": "x"})


def test_sink_consumers_heartbeat_every_tenth_of_a_second_unless_the_worker_or_connector_says_otherwise():
    from connect_magics.runtime.worker.sink_runner import sink_consumer_config

    ours = sink_consumer_config({}, "connect-orders")
    assert ours["heartbeat.interval.ms"] == "100" and ours["group.id"] == "connect-orders"
    assert ours["enable.auto.commit"] is False and ours["auto.offset.reset"] == "earliest"
    theirs = sink_consumer_config({"heartbeat.interval.ms": "3000", "group.id": "ignored", "enable.auto.commit": "true"},
                                  "connect-orders")
    assert theirs["heartbeat.interval.ms"] == "3000"
    assert theirs["group.id"] == "connect-orders" and theirs["enable.auto.commit"] is False


def test_embedded_validators_name_the_keys_own_name():
    """Kafka's ConfigDef.embed calls a validator with the unprefixed name: "for configuration spec"."""
    child = ConfigDef().define("spec", Type.STRING, "a", ValidString.in_("a", "b"))
    values = ConfigDef().embed("transforms.x.", "g", 0, child).validate({"transforms.x.spec": "c"})
    assert values[0].name == "transforms.x.spec"
    assert values[0].errors == ["Invalid value c for configuration spec: String must be one of: a, b"]


def test_validation_refuses_null_values_as_kafkas_herder():
    from connect_magics.runtime.config.connector_config import validate_connector_config
    from connect_magics.runtime.plugins.registry import Plugins

    config = {"connector.class": "FileStreamSink", "topics": "t", "file": "/tmp/x", "transforms": "f",
              "transforms.f.type": "org.apache.kafka.connect.transforms.Flatten$Value", "transforms.f.delimiter": None}
    infos = validate_connector_config(config, Plugins())
    values = {c["value"]["name"]: c["value"] for c in infos["configs"]}
    assert values["transforms.f.delimiter"]["errors"] == ["Null value can not be supplied as the configuration value."]
    assert "org.apache.kafka.connect.transforms.Cast$Value" in values["transforms.f.type"]["recommended_values"]
