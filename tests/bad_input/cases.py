"""The bad-input corpus: every case is one bad input on one surface, and the fragments its error must
contain (the setting or field it names, and why). The test modules beside this file run them.

Surfaces: ``regex`` (Java regular expressions), ``version`` (Maven version ranges), ``magics`` (``%connect``
lines and cell bodies), ``worker`` (a ``ConnectRuntime``'s worker config), ``connector`` (a connector config,
created through the Python API: the 400 must name the fragments, and validation must put them on ``key``),
``update`` (PUT / PATCH of an existing connector's config), ``offsets`` (KIP-875 alter / reset requests),
``api`` (other Python API calls), ``cli`` (the ``connect-magics`` command), ``rest`` (HTTP requests to the
REST API) and ``record`` (a malformed record written raw into an internal topic).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Case:
    """``input`` is the bad input (its form depends on ``surface``); ``expect`` the fragments the error must
    contain; ``status`` the HTTP status where the surface has one; ``key`` the config key validation must put
    the error on (``connector`` cases)."""

    surface: str
    id: str
    input: Any
    expect: tuple[str, ...]
    status: int | None = None
    key: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


CASES: list[Case] = []


def _add(surface: str, id_: str, input_: Any, *expect: str, status: int | None = None, key: str | None = None,
         **extra: Any) -> None:
    CASES.append(Case(surface, id_, input_, tuple(expect), status, key, extra))


# -- Java regular expressions (connect_magics.java_regex): Java's PatternSyntaxException descriptions --------

for pattern, why in [
    ("a[", "Unclosed character class"), ("a(", "Unclosed group"), ("a)", "Unmatched closing ')'"),
    ("*a", "Dangling meta character '*'"), ("+", "Dangling meta character '+'"), ("?x", "Dangling meta character '?'"),
    ("a{,3}", "Illegal repetition"), ("x{a}", "Illegal repetition"), ("{", "Illegal repetition"),
    ("a\\", "Unescaped trailing backslash"), ("\\k<nope>", "named capturing group <nope> does not exist"),
    ("\\p{NoSuchProperty}", "NoSuchProperty"), ("[z-a]", "Illegal character range"), ("\\x{110000}",
                                                                                       "Hexadecimal codepoint is too big"),
    ("\\c", "Illegal control escape sequence"), ("(?<1a>x)", "capturing group name"), ("(?<n>a)(?<n>b)", "<n>"),
    ("\\y", "Illegal/unsupported escape sequence"), ("(?z)", "Unknown inline modifier"), ("a{2,1}", "Illegal repetition range"),
    ("[a-z&&[^aeiou]]", "intersection"), ("(?<=a+)b", "Look-behind"), ("\\X", "grapheme"), ("(?U)\\w", "UNICODE_CHARACTER_CLASS"),
    ("\\p{IsLatin}", "IsLatin"), ("[", "Unclosed character class"),
]:
    _add("regex", f"regex {pattern!r}", pattern, why)

# -- Maven version ranges (runtime/plugins/versions.py): Maven 3.9.6's messages ---------------------------------

for spec, why in [
    ("[1.0", "Unbounded range: [1.0"), ("(1.0", "Unbounded range: (1.0"), ("[1.0,2.0", "Unbounded range"),
    ("(1.0)", "Single version must be surrounded by []: (1.0)"), ("[1.0)", "Single version must be surrounded by []"),
    ("[2.0,1.0]", "Range defies version ordering: [2.0,1.0]"), ("(1.0,1.0)", "Range defies version ordering"),
    ("[1.0,1.0)", "Range defies version ordering"), ("[1,2],[1.5,3]", "Ranges overlap: [1,2],[1.5,3]"),
    ("[1,3],[2,4]", "Ranges overlap"), ("[1,2],3", "Only fully-qualified sets allowed in multiple set scenario"),
    ("[1,2],(", "Unbounded range"),
]:
    _add("version", f"version {spec!r}", spec, why)

# -- %connect magics (notebook/parsing.py): UsageError naming the argument or config line -------------------------

for line, cell, *why in [
    ("", None, "a command is required"), ("frobnicate", None, "invalid choice: 'frobnicate'"),
    ("status", None, "the following arguments are required: NAME"), ("create x", None, "needs a cell body"),
    ("list", "a=b", "takes no cell body"), ("status 'unclosed", None, "cannot parse the arguments"),
    ("peek t -n x", None, "argument -n/--records", "must be an integer >= 0"),
    ("peek t --property novalue --converter JsonConverter", None, "argument --property", "expected KEY=VALUE"),
    ("peek t --property a=b", None, "--property needs --converter"),
    ("rest --port abc", None, "argument --port", "invalid int value: 'abc'"),
    ("dashboard --interval soon", None, "argument --interval", "invalid float value"),
    ("create x --initial-state sleeping", "a=b", "argument --initial-state", "invalid choice: 'SLEEPING'"),
    ("create x", "   ", "The cell is empty"), ("create x", "connector.class", "Config line 1: expected key=value"),
    ("create x", "=v", "Config line 1: the key is empty"), ("create x", "a=1\na=2", "key 'a' is given twice"),
    ("create x", "k=\\uZZZZ", "Config line 1: malformed \\uxxxx escape"),
    ("create x", '{"a": ', "Config JSON is invalid"), ("create x", "[1, 2]", "Config line 1: expected key=value"),
    ("create x", '{"name": "y", "config": {"a": "b"}}', "names connector 'y' but the command names 'x'"),
    ("create x", '{"a": {"b": 1}}', "Config key 'a'", "must be a string, number or boolean"),
]:
    _add("magics", f"magics {line!r} {cell!r}", (line, cell), *why)

# -- worker configs (ConnectRuntime(bootstrap, group, worker_config)): refused before any topic is created ----------

WORKER = "worker"
for id_, args, *why in [
    ("empty bootstrap.servers", ("", None, {}), "bootstrap.servers", "must list at least one broker"),
    ("blank bootstrap.servers", ("  ", None, {}), "bootstrap.servers", "must list at least one broker"),
    ("empty bootstrap entry", ("{b},,{b}", None, {}), "bootstrap.servers", "entry 2", "is empty"),
    ("bootstrap port out of range", ("127.0.0.1:99999", None, {}), "bootstrap.servers", "between 1 and 65535"),
    ("bootstrap not host:port", ("a b:1", None, {}), "bootstrap.servers", "not a broker address"),
    ("empty group.id", ("{b}", "", {}), "group.id", "String may not be empty"),
    ("config topic name", ("{b}", None, {"config.storage.topic": "bad name"}), "config.storage.topic", "illegal"),
    ("offsets topic empty", ("{b}", None, {"offset.storage.topic": ""}), "offset.storage.topic", "can't be empty"),
    ("status topic too long", ("{b}", None, {"status.storage.topic": "x" * 250}), "status.storage.topic",
     "longer than 249"),
    ("status topic dot", ("{b}", None, {"status.storage.topic": ".."}), "status.storage.topic", '"." or ".."'),
    ("same topic twice", ("{b}", None, {"status.storage.topic": "{g}-configs"}), "status.storage.topic",
     "the same topic as config.storage.topic"),
    ("offset partitions zero", ("{b}", None, {"offset.storage.partitions": "0"}), "offset.storage.partitions",
     "Number of partitions must be positive"),
    ("status partitions word", ("{b}", None, {"status.storage.partitions": "five"}), "status.storage.partitions",
     "Not a number of type INT"),
    ("config replication zero", ("{b}", None, {"config.storage.replication.factor": "0"}),
     "config.storage.replication.factor", "Replication factor must be positive"),
    ("offset replication -2", ("{b}", None, {"offset.storage.replication.factor": "-2"}),
     "offset.storage.replication.factor", "Replication factor must be positive"),
    ("status replication word", ("{b}", None, {"status.storage.replication.factor": "three"}),
     "status.storage.replication.factor", "Not a number of type INT"),
    ("flush interval word", ("{b}", None, {"offset.flush.interval.ms": "soon"}), "offset.flush.interval.ms",
     "Not a number of type INT"),
    ("shutdown timeout float", ("{b}", None, {"task.shutdown.graceful.timeout.ms": "1.5"}),
     "task.shutdown.graceful.timeout.ms", "Not a number of type INT"),
    ("topic.creation.enable", ("{b}", None, {"topic.creation.enable": "yes"}), "topic.creation.enable",
     "Expected value to be either true or false"),
    ("topic.tracking.enable", ("{b}", None, {"topic.tracking.enable": "1"}), "topic.tracking.enable",
     "either true or false"),
    ("override policy", ("{b}", None, {"connector.client.config.override.policy": "Some"}),
     "connector.client.config.override.policy", "Must be one of None, Principal, All"),
    ("status retries negative", ("{b}", None, {"status.storage.retry.max.retries": "-1"}),
     "status.storage.retry.max.retries", "at least 0"),
    ("status backoff multiplier", ("{b}", None, {"status.storage.retry.backoff.multiplier": "fast"}),
     "status.storage.retry.backoff.multiplier", "Not a number of type DOUBLE"),
    ("status request timeout", ("{b}", None, {"status.storage.request.timeout.ms": "5"}),
     "status.storage.request.timeout.ms", "at least 10"),
    ("producer setting type", ("{b}", None, {"producer.linger.ms": "soon"}), "producer.linger.ms",
     "Invalid value for configuration property"),
    ("consumer unknown setting", ("{b}", None, {"consumer.interceptor.classes": "X"}), "consumer.interceptor.classes",
     "No such configuration property", "librdkafka"),
    ("admin setting range", ("{b}", None, {"admin.socket.timeout.ms": "1"}), "admin.socket.timeout.ms",
     "outside allowed range"),
    ("top-level client setting", ("{b}", None, {"reconnect.backoff.ms": "-1"}), "reconnect.backoff.ms",
     "outside allowed range"),
    ("worker key converter", ("{b}", None, {"key.converter": "NoSuchConverter"}), "key.converter",
     "Class NoSuchConverter could not be found"),
    ("worker header converter type", ("{b}", None, {"header.converter": "org.apache.kafka.connect.transforms.Filter"}),
     "header.converter", "could not be found"),
    ("worker converter version range", ("{b}", None, {"value.converter.plugin.version": "[1.0"}),
     "value.converter.plugin.version", "Unbounded range"),
    ("executor name", ("{b}", None, {}), "executor", "must be one of threads, processes, spark or an Executor"),
]:
    _add(WORKER, id_, args, *why, **({"executor": "gpu"} if id_ == "executor name" else {}))

# -- connector configs (create through the Python API; validation names the key) ------------------------------------

SRC = {"connector.class": "FileStreamSource", "file": "{file}", "topic": "bi-lines"}
SINK = {"connector.class": "FileStreamSink", "file": "{file}", "topics": "bi-in"}
TC = {"topic.creation.default.partitions": "1", "topic.creation.default.replication.factor": "1"}


def _conn(id_: str, base: dict[str, str], changes: dict[str, Any], key: str, *why: str) -> None:
    _add("connector", id_, {**base, **changes}, *why, status=400, key=key)


for id_, base, changes, key, *why in [
    ("tasks.max word", SRC, {"tasks.max": "many"}, "tasks.max", "Invalid value many for configuration tasks.max",
     "Not a number of type INT"),
    ("tasks.max zero", SRC, {"tasks.max": "0"}, "tasks.max", "tasks.max", "Value must be at least 1"),
    ("tasks.max negative", SRC, {"tasks.max": "-3"}, "tasks.max", "tasks.max", "at least 1"),
    ("tasks.max float", SRC, {"tasks.max": "1.5"}, "tasks.max", "tasks.max", "Not a number of type INT"),
    ("tasks.max too big", SRC, {"tasks.max": "99999999999"}, "tasks.max", "tasks.max", "Not a number of type INT"),
    ("tasks.max empty", SRC, {"tasks.max": ""}, "tasks.max", "tasks.max", "Not a number"),
    ("missing connector.class", {"topic": "t"}, {}, None, "contains no connector type"),
    ("unknown connector.class", SRC, {"connector.class": "NoSuchConnector"}, None,
     "Failed to find any class that implements Connector and which name matches NoSuchConnector"),
    ("transformation as connector.class", SRC, {"connector.class": "org.apache.kafka.connect.transforms.Filter"},
     None, "Failed to find any class that implements Connector"),
    ("errors.tolerance", SRC, {"errors.tolerance": "some"}, "errors.tolerance", "errors.tolerance",
     "String must be one of (case insensitive):"),
    ("errors.retry.timeout word", SRC, {"errors.retry.timeout": "forever"}, "errors.retry.timeout",
     "errors.retry.timeout", "Not a number of type LONG"),
    ("errors.retry.delay.max.ms word", SRC, {"errors.retry.delay.max.ms": "1m"}, "errors.retry.delay.max.ms",
     "errors.retry.delay.max.ms", "Not a number of type LONG"),
    ("errors.log.enable", SRC, {"errors.log.enable": "yes"}, "errors.log.enable", "errors.log.enable",
     "Expected value to be either true or false"),
    ("errors.log.include.messages", SRC, {"errors.log.include.messages": "1"}, "errors.log.include.messages",
     "errors.log.include.messages", "either true or false"),
    ("dlq replication word", SINK, {"errors.deadletterqueue.topic.replication.factor": "x"},
     "errors.deadletterqueue.topic.replication.factor", "errors.deadletterqueue.topic.replication.factor",
     "Not a number of type SHORT"),
    ("dlq replication too big", SINK, {"errors.deadletterqueue.topic.replication.factor": "40000"},
     "errors.deadletterqueue.topic.replication.factor", "Not a number of type SHORT"),
    ("dlq context headers", SINK, {"errors.deadletterqueue.context.headers.enable": "maybe"},
     "errors.deadletterqueue.context.headers.enable", "errors.deadletterqueue.context.headers.enable",
     "either true or false"),
    ("dlq topic name", SINK, {"errors.deadletterqueue.topic.name": "dead letters"},
     "errors.deadletterqueue.topic.name", "errors.deadletterqueue.topic.name", "illegal"),
    ("dlq topic consumed", SINK, {"errors.deadletterqueue.topic.name": "bi-in"},
     "errors.deadletterqueue.topic.name", "The DLQ topic 'bi-in' may not be included in the list of topics"),
    ("dlq topic matched by regex", SINK, {"topics": "", "topics.regex": "bi-.*",
                                         "errors.deadletterqueue.topic.name": "bi-dlq"},
     "errors.deadletterqueue.topic.name", "may not be included in the regex matching the topics"),
    ("sink topics and regex", SINK, {"topics.regex": "bi-.*"}, "topics.regex",
     "topics and topics.regex are mutually exclusive options, but both are set."),
    ("sink no topics", SINK, {"topics": ""}, "topics", 'Must configure one of "topics" or "topics.regex"'),
    ("sink topics.regex syntax", SINK, {"topics": "", "topics.regex": "bi-[a"}, "topics.regex",
     "Invalid value bi-[a for configuration topics.regex", "Invalid regex: Unclosed character class"),
    ("sink topics.regex untranslatable", SINK, {"topics": "", "topics.regex": "(?<=a+)b"}, "topics.regex",
     "topics.regex", "Look-behind"),
    ("sink topic name", SINK, {"topics": "in put"}, "topics", "configuration topics", 'Topic name "in put" is illegal'),
    ("sink empty topic entry", SINK, {"topics": "a,,b"}, "topics", "configuration topics", "can't be empty"),
    ("sink topic too long", SINK, {"topics": "t" * 250}, "topics", "configuration topics", "longer than 249"),
    ("offsets.storage.topic name", SRC, {"offsets.storage.topic": "my offsets"}, "offsets.storage.topic",
     "offsets.storage.topic", "illegal"),
    ("file source two topics", SRC, {"topic": "a,b"}, "topic", "requires definition of a single topic"),
    ("file source no topic", {k: v for k, v in SRC.items() if k != "topic"}, {}, "topic",
     'Missing required configuration "topic"'),
    ("file source stdin", {k: v for k, v in SRC.items() if k != "file"}, {}, "file",
     "configuration file", "Reading the standard input is not supported"),
    ("file source batch.size", SRC, {"batch.size": "big"}, "batch.size", "batch.size", "Not a number of type INT"),
    ("sequence records word", {"connector.class": "SequenceSource", "topic": "t"}, {"records": "lots"}, "records",
     "configuration records", "Not a number of type LONG"),
    ("sequence rate negative", {"connector.class": "SequenceSource", "topic": "t"}, {"rate": "-3"}, "rate",
     "configuration rate", "at least 0"),
    ("sequence key.mode", {"connector.class": "SequenceSource", "topic": "t"}, {"key.mode": "random"}, "key.mode",
     "configuration key.mode", "String must be one of"),
    ("key.converter unknown", SRC, {"key.converter": "NoSuchConverter"}, "key.converter",
     "Invalid value NoSuchConverter for configuration key.converter", "could not be found"),
    ("value.converter not a converter", SRC, {"value.converter": "org.apache.kafka.connect.transforms.Filter"},
     "value.converter", "configuration value.converter", "could not be found"),
    ("header.converter unknown", SRC, {"header.converter": "JsonHeaderConverterX"}, "header.converter",
     "configuration header.converter", "could not be found"),
    ("header.converter is a key converter only", SRC, {"header.converter": "NoSuch.HeaderConverter"},
     "header.converter", "header.converter"),
    ("key.converter version missing", SRC, {"key.converter": "StringConverter",
                                            "key.converter.plugin.version": "[2.0,)"},
     "key.converter.plugin.version", "StringConverter not found that matches the version range [2.0,)"),
    ("key.converter version syntax", SRC, {"key.converter.plugin.version": "[1.0"}, "key.converter.plugin.version",
     "Invalid value [1.0 for configuration key.converter.plugin.version", "Unbounded range"),
    ("value.converter version syntax", SRC, {"value.converter": "StringConverter",
                                             "value.converter.plugin.version": "(1.0)"},
     "value.converter.plugin.version", "value.converter.plugin.version", "Single version must be surrounded by []"),
    ("header.converter version missing", SRC, {"header.converter": "SimpleHeaderConverter",
                                               "header.converter.plugin.version": "0.0.1"},
     "header.converter.plugin.version", "not found that matches the version range [0.0.1,0.0.1]"),
    ("connector version syntax", SRC, {"connector.plugin.version": "[1.0"}, "connector.plugin.version",
     "Invalid value [1.0 for configuration connector.plugin.version", "Unbounded range"),
    ("connector version ordering", SRC, {"connector.plugin.version": "[2.0,1.0]"}, "connector.plugin.version",
     "connector.plugin.version", "Range defies version ordering"),
    ("connector version overlap", SRC, {"connector.plugin.version": "[1,2],[1.5,3]"}, "connector.plugin.version",
     "connector.plugin.version", "Ranges overlap"),
    ("connector version set", SRC, {"connector.plugin.version": "[1,2],3"}, "connector.plugin.version",
     "connector.plugin.version", "Only fully-qualified sets allowed"),
    ("connector version not installed", SRC, {"connector.plugin.version": "9.9"}, "connector.plugin.version",
     "not found that matches the version range [9.9,9.9], available versions: [0.1.0]"),
    ("transform without type", SRC, {"transforms": "a"}, "transforms.a.type",
     'Missing required configuration "transforms.a.type"'),
    ("transform unknown type", SRC, {"transforms": "a", "transforms.a.type": "NoSuchTransform"}, "transforms.a.type",
     "Invalid value NoSuchTransform for configuration transforms.a.type", "could not be found"),
    ("predicate class as transform", SRC, {"transforms": "a", "transforms.a.type": "TopicNameMatches"},
     "transforms.a.type", "configuration transforms.a.type", "could not be found"),
    ("transform missing settings", SRC, {"transforms": "r", "transforms.r.type": "RegexRouter"},
     "transforms.r.replacement", 'Missing required configuration "transforms.r.regex"',
     'Missing required configuration "transforms.r.replacement"'),
    ("transform bad regex", SRC, {"transforms": "r", "transforms.r.type": "RegexRouter", "transforms.r.regex": "a(",
                                  "transforms.r.replacement": "x"}, "transforms.r.regex",
     "Invalid value a( for configuration regex", "Invalid regex: Unclosed group"),
    ("transform negate", SRC, {"transforms": "f", "transforms.f.type": "Filter", "transforms.f.negate": "sure"},
     "transforms.f.negate", "configuration transforms.f.negate", "either true or false"),
    ("transform unknown predicate", SRC, {"transforms": "f", "transforms.f.type": "Filter",
                                          "transforms.f.predicate": "p"}, "transforms.f.type",
     "Invalid value p for configuration transforms.f.predicate: Predicate not found in 'predicates'"),
    ("transform version missing", SRC, {"transforms": "f", "transforms.f.type": "Filter",
                                        "transforms.f.plugin.version": "[5,)"}, "transforms.f.plugin.version",
     "not found that matches the version range [5,)"),
    ("transform version syntax", SRC, {"transforms": "f", "transforms.f.type": "Filter",
                                       "transforms.f.plugin.version": "[5"}, "transforms.f.plugin.version",
     "configuration transforms.f.plugin.version", "Unbounded range"),
    ("replace field bad renames", SRC, {"transforms": "r", "transforms.r.type": "ReplaceField$Value",
                                        "transforms.r.renames": "a:b,c"}, "transforms.r.renames",
     "configuration renames", "Invalid rename mapping: c"),
    ("hoist field without field", SRC, {"transforms": "h", "transforms.h.type": "HoistField$Value"},
     "transforms.h.field", 'Missing required configuration "transforms.h.field"'),
    ("predicate without type", SRC, {"predicates": "p"}, "predicates.p.type",
     'Missing required configuration "predicates.p.type"'),
    ("predicate unknown type", SRC, {"predicates": "p", "predicates.p.type": "NoSuchPredicate"},
     "predicates.p.type", "configuration predicates.p.type", "could not be found"),
    ("transform class as predicate", SRC, {"predicates": "p", "predicates.p.type": "RegexRouter"},
     "predicates.p.type", "configuration predicates.p.type", "could not be found"),
    ("predicate missing pattern", SRC, {"predicates": "p", "predicates.p.type": "TopicNameMatches"},
     "predicates.p.pattern", 'Missing required configuration "predicates.p.pattern"'),
    ("predicate bad pattern", SRC, {"predicates": "p", "predicates.p.type": "TopicNameMatches",
                                    "predicates.p.pattern": "a{,2}"}, "predicates.p.pattern",
     "Invalid value a{,2} for configuration pattern", "Illegal repetition"),
    ("predicate missing header name", SRC, {"predicates": "p", "predicates.p.type": "HasHeaderKey"},
     "predicates.p.name", 'Missing required configuration "predicates.p.name"'),
    ("predicate version syntax", SRC, {"predicates": "p", "predicates.p.type": "RecordIsTombstone",
                                       "predicates.p.plugin.version": "(1)"}, "predicates.p.plugin.version",
     "configuration predicates.p.plugin.version", "Single version must be surrounded by []"),
    ("topic.creation duplicate groups", SRC, {**TC, "topic.creation.groups": "g,g"}, "topic.creation.groups",
     "Invalid value [g, g] for configuration topic.creation.groups: Duplicate alias provided."),
    ("topic.creation missing replication", SRC, {"topic.creation.default.partitions": "3"},
     "topic.creation.default.replication.factor",
     'Missing required configuration "topic.creation.default.replication.factor"'),
    ("topic.creation missing partitions", SRC, {"topic.creation.default.replication.factor": "1"},
     "topic.creation.default.partitions", 'Missing required configuration "topic.creation.default.partitions"'),
    ("topic.creation partitions zero", SRC, {**TC, "topic.creation.default.partitions": "0"},
     "topic.creation.default.partitions", "topic.creation.default.partitions",
     "Number of partitions must be positive, or -1"),
    ("topic.creation partitions word", SRC, {**TC, "topic.creation.default.partitions": "x"},
     "topic.creation.default.partitions", "topic.creation.default.partitions", "Not a number of type INT"),
    ("topic.creation replication -2", SRC, {**TC, "topic.creation.default.replication.factor": "-2"},
     "topic.creation.default.replication.factor", "topic.creation.default.replication.factor",
     "Replication factor must be positive"),
    ("topic.creation replication too big", SRC, {**TC, "topic.creation.default.replication.factor": "70000"},
     "topic.creation.default.replication.factor", "topic.creation.default.replication.factor", "SHORT"),
    ("topic.creation group include regex", SRC, {**TC, "topic.creation.groups": "g", "topic.creation.g.include": "a["},
     "topic.creation.g.include", "topic.creation.g.include", "Syntax error in regular expression"),
    ("topic.creation group exclude regex", SRC, {**TC, "topic.creation.groups": "g", "topic.creation.g.include": "a",
                                                 "topic.creation.g.exclude": "(b"},
     "topic.creation.g.exclude", "topic.creation.g.exclude", "Syntax error in regular expression"),
    ("topic.creation group partitions", SRC, {**TC, "topic.creation.groups": "g", "topic.creation.g.partitions": "0"},
     "topic.creation.g.partitions", "topic.creation.g.partitions", "Number of partitions must be positive"),
    ("topic.creation group replication", SRC, {**TC, "topic.creation.groups": "g",
                                               "topic.creation.g.replication.factor": "zero"},
     "topic.creation.g.replication.factor", "topic.creation.g.replication.factor", "Not a number"),
    ("producer bootstrap empty", SRC, {"producer.override.bootstrap.servers": ""},
     "producer.override.bootstrap.servers", "configuration producer.override.bootstrap.servers",
     "must list at least one broker"),
    ("producer bootstrap blank", SRC, {"producer.override.bootstrap.servers": "  "},
     "producer.override.bootstrap.servers", "producer.override.bootstrap.servers", "must list at least one broker"),
    ("consumer bootstrap empty entry", SINK, {"consumer.override.bootstrap.servers": "a:9092,"},
     "consumer.override.bootstrap.servers", "consumer.override.bootstrap.servers", "entry 2", "is empty"),
    ("admin bootstrap bad port", SRC, {"admin.override.bootstrap.servers": "a:0"},
     "admin.override.bootstrap.servers", "admin.override.bootstrap.servers", "between 1 and 65535"),
    ("consumer group.id empty", SINK, {"consumer.override.group.id": ""}, "consumer.override.group.id",
     "consumer.override.group.id", "may not be empty"),
    ("producer linger.ms word", SRC, {"producer.override.linger.ms": "abc"}, "producer.override.linger.ms",
     "Invalid value abc for configuration producer.override.linger.ms", "Invalid value for configuration property"),
    ("producer batch.size zero", SRC, {"producer.override.batch.size": "0"}, "producer.override.batch.size",
     "producer.override.batch.size", "outside allowed range"),
    ("producer acks", SRC, {"producer.override.acks": "maybe"}, "producer.override.acks", "producer.override.acks",
     "Invalid value for configuration property"),
    ("producer unknown setting", SRC, {"producer.override.max.request.size": "10"},
     "producer.override.max.request.size", "producer.override.max.request.size", "No such configuration property",
     "librdkafka"),
    ("producer idempotence", SRC, {"producer.override.enable.idempotence": "maybe"},
     "producer.override.enable.idempotence", "producer.override.enable.idempotence", "Expected bool value"),
    ("consumer auto.offset.reset", SINK, {"consumer.override.auto.offset.reset": "sometimes"},
     "consumer.override.auto.offset.reset", "consumer.override.auto.offset.reset", "Invalid value \"sometimes\""),
    ("consumer fetch backoff negative", SINK, {"consumer.override.fetch.queue.backoff.ms": "-1"},
     "consumer.override.fetch.queue.backoff.ms", "consumer.override.fetch.queue.backoff.ms", "outside allowed range"),
    ("consumer java setting", SINK, {"consumer.override.default.api.timeout.ms": "10"},
     "consumer.override.default.api.timeout.ms", "consumer.override.default.api.timeout.ms",
     "No such configuration property"),
    ("admin socket timeout", SRC, {"admin.override.socket.timeout.ms": "1"}, "admin.override.socket.timeout.ms",
     "admin.override.socket.timeout.ms", "outside allowed range"),
    ("admin java serializer", SRC, {"admin.override.key.serializer": "x"}, "admin.override.key.serializer",
     "admin.override.key.serializer", "No such configuration property"),
    ("non-string setting value", SRC, {"file.extra": {"nested": 1}}, None,
     "configuration file.extra", "must be strings, numbers, booleans or lists of those, not an object"),
    ("null setting value", SRC, {"batch.size": None}, None, "configuration batch.size", "not null"),
]:
    _conn(id_, base, changes, key, *why)

#: Connector cases on a runtime whose worker forbids client overrides (connector.client.config.override.policy).
for policy, setting in [("None", "producer.override.linger.ms"), ("None", "consumer.override.group.id"),
                        ("Principal", "admin.override.client.id"), ("Principal", "producer.override.acks")]:
    _add("connector", f"{setting} under policy {policy}", {**(SINK if "consumer" in setting else SRC), setting: "1"},
         f"The '{policy}' policy does not allow '{setting.split('.', 2)[2]}' to be overridden", status=400,
         key=setting, policy=policy)

# -- updates of an existing connector (its config stays as it was) ------------------------------------------------

for id_, (method, changes), *why in [
    ("put tasks.max", ("put", {"tasks.max": "none"}), "configuration tasks.max", "Not a number of type INT"),
    ("put other class", ("put", {"connector.class": "NoSuchConnector"}), "matches NoSuchConnector"),
    ("put name mismatch", ("put", {"name": "other"}),
     "Connector name configuration (other) doesn't match connector name in the URL"),
    ("put bad override", ("put", {"producer.override.bootstrap.servers": ""}), "producer.override.bootstrap.servers"),
    ("put bad topic.creation", ("put", {"topic.creation.default.partitions": "-5",
                                        "topic.creation.default.replication.factor": "1"}),
     "topic.creation.default.partitions", "Number of partitions must be positive"),
    ("patch tasks.max", ("patch", {"tasks.max": "0"}), "configuration tasks.max", "at least 1"),
    ("patch removes topic", ("patch", {"topic": None}), 'Missing required configuration "topic"'),
    ("patch errors.tolerance", ("patch", {"errors.tolerance": "most"}), "errors.tolerance", "String must be one of"),
    ("patch nested value", ("patch", {"topic": ["a", {"b": 1}]}), "configuration topic", "not list"),
    ("patch converter", ("patch", {"value.converter": "Nope"}), "configuration value.converter", "could not be found"),
    ("patch unknown connector", ("patch-unknown", {"tasks.max": "1"}), "Connector bi-nope not found"),
    ("patch not a dict", ("patch", [("tasks.max", "2")]), "Connector config must be a JSON object"),
    ("put not a dict", ("put-raw", "tasks.max=2"), "Connector config must be a JSON object"),
]:
    _add("update", id_, (method, changes), *why, status=404 if method == "patch-unknown" else 400)

# -- KIP-875 offsets requests (Kafka Connect's codes and messages) -------------------------------------------------

NOT_STOPPED = "Connectors must be in the STOPPED state before their offsets can be modified"
EMPTY = "Partitions / offsets need to be provided for an alter offsets request"


def _sink_entry(partition: Any, offset: Any = None) -> dict[str, Any]:
    return {"offsets": [{"partition": partition, "offset": offset}]}


for id_, target, body, status, *why in [
    ("null body", "src-stopped", None, 400, EMPTY),
    ("no offsets key", "src-stopped", {}, 400, EMPTY),
    ("empty offsets", "sink-stopped", {"offsets": []}, 400, EMPTY),
    ("body is a list", "src-stopped", [], 500, "expected a JSON object", "got array"),
    ("body is a string", "src-stopped", "offsets", 500, "expected a JSON object", "got string"),
    ("unknown body field", "src-stopped", {"offsets": [], "extra": 1}, 500, 'Unrecognized field "extra"'),
    ("offsets not a list", "src-stopped", {"offsets": {"a": 1}}, 500, 'Cannot deserialize value of "offsets"',
     "got object"),
    ("entry not an object", "src-stopped", {"offsets": [5]}, 500, "offsets[0]", "got number"),
    ("unknown entry field", "src-stopped", {"offsets": [{"partition": {}, "offset": {}, "x": 1}]}, 500,
     'Unrecognized field "x" in offsets[0]'),
    ("partition is a list", "src-stopped", {"offsets": [{"partition": [1], "offset": None}]}, 500,
     "offsets[0].partition", "got array"),
    ("offset is a string", "src-stopped", {"offsets": [{"partition": {"filename": "f"}, "offset": "10"}]}, 500,
     "offsets[0].offset", "got string"),
    ("unknown connector", "bi-nope", {"offsets": [{"partition": {"a": 1}, "offset": None}]}, 404,
     "Connector bi-nope not found"),
    ("running source", "src-running", {"offsets": [{"partition": {"filename": "f"}, "offset": None}]}, 400,
     NOT_STOPPED, "'/connectors/src-running/stop'"),
    ("paused source", "src-paused", {"offsets": [{"partition": {"filename": "f"}, "offset": None}]}, 400,
     NOT_STOPPED),
    ("running sink", "sink-running", _sink_entry({"kafka_topic": "bi-in", "kafka_partition": 0}), 400, NOT_STOPPED),
    ("source null partition", "src-stopped", {"offsets": [{"partition": None, "offset": {"position": 1}}]}, 500,
     "The partition of offsets[0] is null or missing"),
    ("source nested partition value", "src-stopped", {"offsets": [{"partition": {"filename": {"a": 1}},
                                                                   "offset": {"position": 1}}]}, 500,
     "Offsets may only contain primitive types as values, but field filename contains MAP"),
    ("source list offset value", "src-stopped", {"offsets": [{"partition": {"filename": "f"},
                                                              "offset": {"position": [1]}}]}, 500,
     "field position contains ARRAY"),
    ("source offset without position", "src-stopped", {"offsets": [{"partition": {"filename": "f"},
                                                                    "offset": {"pos": 1}}]}, 500,
     "Offset objects should either be null or contain the key 'position'"),
    ("source position word", "src-stopped", {"offsets": [{"partition": {"filename": "f"},
                                                          "offset": {"position": "ten"}}]}, 500,
     "The value for the 'position' key in the offset is expected to be a Long value"),
    ("source position negative", "src-stopped", {"offsets": [{"partition": {"filename": "f"},
                                                              "offset": {"position": -1}}]}, 500,
     "The value for the 'position' key in the offset should be a non-negative value"),
    ("source position float", "src-stopped", {"offsets": [{"partition": {"filename": "f"},
                                                           "offset": {"position": 1.5}}]}, 500,
     "'position' key in the offset is expected to be a Long value"),
    ("source position infinite", "src-stopped", {"offsets": [{"partition": {"filename": "f"},
                                                              "offset": {"position": float("inf")}}]}, 500,
     "field position contains inf"),
    ("sink null partition", "sink-stopped", _sink_entry(None, {"kafka_offset": 1}), 400,
     "The partition for a sink connector offset cannot be null or missing"),
    ("sink partition without topic", "sink-stopped", _sink_entry({"kafka_partition": 0}, {"kafka_offset": 1}), 400,
     "must contain the keys 'kafka_topic' and 'kafka_partition'"),
    ("sink partition without number", "sink-stopped", _sink_entry({"kafka_topic": "bi-in"}, {"kafka_offset": 1}),
     400, "must contain the keys 'kafka_topic' and 'kafka_partition'"),
    ("sink null topic", "sink-stopped", _sink_entry({"kafka_topic": None, "kafka_partition": 0}), 400,
     "Kafka topic names must be valid strings and may not be null"),
    ("sink object topic", "sink-stopped", _sink_entry({"kafka_topic": {"a": 1}, "kafka_partition": 0}), 400,
     "Kafka topic names must be valid strings"),
    ("sink null partition number", "sink-stopped", _sink_entry({"kafka_topic": "bi-in", "kafka_partition": None}),
     400, "Kafka partitions must be valid numbers and may not be null"),
    ("sink partition word", "sink-stopped", _sink_entry({"kafka_topic": "bi-in", "kafka_partition": "zero"}), 400,
     "Failed to parse the following Kafka partition value in the provided offsets: 'zero'"),
    ("sink partition float", "sink-stopped", _sink_entry({"kafka_topic": "bi-in", "kafka_partition": 1.5}), 400,
     "Kafka partition value in the provided offsets: '1.5'", "need to be integers"),
    ("sink partition negative", "sink-stopped", _sink_entry({"kafka_topic": "bi-in", "kafka_partition": -1}), 400,
     "Kafka partitions must be non-negative, but got -1"),
    ("sink partition too big", "sink-stopped", _sink_entry({"kafka_topic": "bi-in", "kafka_partition": 2 ** 31}),
     400, "Failed to parse the following Kafka partition value", "'2147483648'"),
    ("sink offset without key", "sink-stopped", _sink_entry({"kafka_topic": "bi-in", "kafka_partition": 0},
                                                            {"offset": 5}), 400,
     "The offset for a sink connector should either be null or contain the key 'kafka_offset'"),
    ("sink offset word", "sink-stopped", _sink_entry({"kafka_topic": "bi-in", "kafka_partition": 0},
                                                     {"kafka_offset": "five"}), 400,
     "Failed to parse the following Kafka offset value in the provided offsets: 'five'"),
    ("sink offset float", "sink-stopped", _sink_entry({"kafka_topic": "bi-in", "kafka_partition": 0},
                                                      {"kafka_offset": 2.5}), 400,
     "Kafka offset value in the provided offsets: '2.5'"),
    ("sink offset negative", "sink-stopped", _sink_entry({"kafka_topic": "bi-in", "kafka_partition": 0},
                                                         {"kafka_offset": -4}), 400,
     "Kafka offsets must be non-negative, but got -4"),
    ("sink offset null value", "sink-stopped", _sink_entry({"kafka_topic": "bi-in", "kafka_partition": 0},
                                                           {"kafka_offset": None}), 400,
     "Kafka offset value in the provided offsets: 'null'"),
    ("reset unknown connector", "bi-nope", "reset", 404, "Connector bi-nope not found"),
    ("reset running source", "src-running", "reset", 400, NOT_STOPPED),
    ("reset paused source", "src-paused", "reset", 400, NOT_STOPPED),
    ("reset running sink", "sink-running", "reset", 400, NOT_STOPPED),
]:
    _add("offsets", id_, (target, body), *why, status=status)

# -- other Python API calls -------------------------------------------------------------------------------------

for id_, call, status, *why in [
    ("initial state", ("create_connector", "bi-x", {**SRC}, "SLEEPING"), 400,
     "Invalid initial state SLEEPING: must be one of RUNNING, PAUSED, STOPPED"),
    ("empty name", ("create_connector", " ", {**SRC}), 400, "configuration name: String may not be empty"),
    ("name mismatch", ("create_connector", "bi-x", {**SRC, "name": "bi-y"}), 400,
     "Connector name configuration (bi-y) doesn't match connector name in the URL (bi-x)"),
    ("config not a dict", ("create_connector", "bi-x", ["connector.class"]), 400,
     "Connector config must be a JSON object"),
    ("duplicate connector", ("create_connector", "src-stopped", {**SRC}), 409, "Connector src-stopped already exists"),
    ("pause unknown", ("pause_connector", "bi-nope"), 404, "Unknown connector bi-nope"),
    ("resume unknown", ("resume_connector", "bi-nope"), 404, "Unknown connector bi-nope"),
    ("stop unknown", ("stop_connector", "bi-nope"), 404, "Unknown connector bi-nope"),
    ("restart unknown", ("restart_connector", "bi-nope"), 404, "Unknown connector: bi-nope"),
    ("delete unknown", ("delete_connector", "bi-nope"), 404, "Connector bi-nope not found"),
    ("status unknown", ("connector_status", "bi-nope"), 404, "No status found for connector bi-nope"),
    ("info unknown", ("connector_info", "bi-nope"), 404, "Connector bi-nope not found"),
    ("config unknown", ("connector_config", "bi-nope"), 404, "Connector bi-nope not found"),
    ("offsets unknown", ("get_offsets", "bi-nope"), 404, "Connector bi-nope not found"),
    ("task status unknown", ("task_status", "src-running", 7), 404, "No status found for task src-running-7"),
    ("restart task unknown", ("restart_task", "src-running", 7), 404, "Unknown task: src-running-7"),
    ("restart task of unknown connector", ("restart_task", "bi-nope", 0), 404, "Unknown connector: bi-nope"),
    ("plugin config unknown plugin", ("connector_plugin_config", "NoSuchPlugin"), 404, "Unknown plugin NoSuchPlugin."),
    ("plugin config bad version", ("connector_plugin_config", "FileStreamSource", "[1.0"), 400,
     "Invalid version specification: [1.0"),
    ("plugin config version missing", ("connector_plugin_config", "FileStreamSource", "[5.0,)"), 400,
     "not found that matches the version range [5.0,)"),
    ("validate without class", ("validate_connector_config", {"topic": "t"}), 400, "contains no connector type"),
    ("explain bad topic name", ("explain_topic_creation", {**SRC, **TC}, ["bad topic"]), 400,
     "Invalid value 'bad topic' in topics", "illegal"),
    ("explain topics not a list", ("explain_topic_creation", {**SRC, **TC}, "orders"), 400,
     "topics must be a list of topic names, not str"),
    ("explain bad config", ("explain_topic_creation", {**SRC, "topic.creation.default.partitions": "0",
                                                       "topic.creation.default.replication.factor": "1"}, []), 400,
     "topic.creation.default.partitions", "Number of partitions must be positive"),
    ("explain unknown connector", ("explain_topic_creation", "bi-nope", []), 404, "Connector bi-nope not found"),
    ("created topics unknown", ("created_topics", "bi-nope"), 404, "Connector bi-nope not found"),
    ("topics name not a string", ("connector_topics", 5), 400, "Invalid connector name 5: must be a string"),
]:
    _add("api", id_, call, *why, status=status)

# -- the REST API (exact Kafka Connect codes; bodies {"error_code", "message"}) ------------------------------------

for id_, (method, path, body), status, *why in [
    ("malformed JSON create", ("POST", "/connectors", b"{not json"), 500, "Cannot deserialize"),
    ("truncated JSON put", ("PUT", "/connectors/bi-x/config", b'{"connector.class": '), 500, "Cannot deserialize"),
    ("create body is a list", ("POST", "/connectors", []), 400, "must be a JSON object"),
    ("create without config", ("POST", "/connectors", {"name": "bi-x"}), 400, "'config' object"),
    ("create config is a string", ("POST", "/connectors", {"name": "bi-x", "config": "a=b"}), 400, "'config' object"),
    ("create invalid config", ("POST", "/connectors", {"name": "bi-x", "config": {**SRC, "tasks.max": "x"}}), 400,
     "Connector configuration is invalid and contains the following 2 error(s)", "configuration tasks.max"),
    ("create bad initial_state", ("POST", "/connectors", {"name": "bi-x", "config": SRC, "initial_state": "ON"}), 400,
     "Invalid initial state ON"),
    ("create empty name", ("POST", "/connectors", {"name": "", "config": SRC}), 400, "String may not be empty"),
    ("create duplicate", ("POST", "/connectors", {"name": "src-stopped", "config": SRC}), 409,
     "Connector src-stopped already exists"),
    ("create override", ("POST", "/connectors", {"name": "bi-x", "config": {
        **SRC, "producer.override.bootstrap.servers": ""}}), 400, "producer.override.bootstrap.servers",
     "must list at least one broker"),
    ("put config is a list", ("PUT", "/connectors/bi-x/config", ["a"]), 400, "must be a JSON object"),
    ("put name mismatch", ("PUT", "/connectors/bi-x/config", {**SRC, "name": "bi-y"}), 400,
     "Connector name configuration (bi-y) doesn't match connector name in the URL (bi-x)"),
    ("patch unknown", ("PATCH", "/connectors/bi-nope/config", {"tasks.max": "2"}), 404, "Connector bi-nope not found"),
    ("patch bad value", ("PATCH", "/connectors/src-stopped/config", {"tasks.max": "-1"}), 400,
     "configuration tasks.max", "at least 1"),
    ("get unknown", ("GET", "/connectors/bi-nope", None), 404, "Connector bi-nope not found"),
    ("status unknown", ("GET", "/connectors/bi-nope/status", None), 404, "No status found for connector bi-nope"),
    ("task status non-numeric", ("GET", "/connectors/src-running/tasks/zero/status", None), 404, "HTTP 404 Not Found"),
    ("restart task unknown", ("POST", "/connectors/src-running/tasks/9/restart", None), 404, "Unknown task"),
    ("pause unknown", ("PUT", "/connectors/bi-nope/pause", None), 404, "Unknown connector bi-nope"),
    ("stop unknown", ("PUT", "/connectors/bi-nope/stop", None), 404, "Unknown connector bi-nope"),
    ("delete unknown", ("DELETE", "/connectors/bi-nope", None), 404, "Connector bi-nope not found"),
    ("offsets body malformed", ("PATCH", "/connectors/src-stopped/offsets", b"[{"), 500, "Cannot deserialize"),
    ("offsets empty", ("PATCH", "/connectors/src-stopped/offsets", {"offsets": []}), 400, EMPTY),
    ("offsets running", ("PATCH", "/connectors/src-running/offsets", {"offsets": [{"partition": {"filename": "f"},
                                                                                   "offset": None}]}), 400,
     NOT_STOPPED),
    ("reset offsets running", ("DELETE", "/connectors/sink-running/offsets", None), 400, NOT_STOPPED),
    ("sink offsets bad partition", ("PATCH", "/connectors/sink-stopped/offsets",
                                    _sink_entry({"kafka_topic": "bi-in", "kafka_partition": "x"})), 400,
     "Failed to parse the following Kafka partition value in the provided offsets: 'x'"),
    ("validate mismatched type", ("PUT", "/connector-plugins/FileStreamSink/config/validate", SRC), 400,
     "Included connector type FileStreamSource does not match request type FileStreamSink"),
    ("validate without class", ("PUT", "/connector-plugins/FileStreamSource/config/validate", {"topic": "t"}), 400,
     "contains no connector type"),
    ("validate not an object", ("PUT", "/connector-plugins/FileStreamSource/config/validate", "x"), 400,
     "must be a JSON object"),
    ("plugin unknown", ("GET", "/connector-plugins/NoSuchPlugin/config", None), 404, "Unknown plugin NoSuchPlugin."),
    ("plugin bad version", ("GET", "/connector-plugins/FileStreamSource/config?version=(1", None), 400,
     "Invalid version specification: (1"),
    ("unknown path", ("GET", "/nope", None), 404, "HTTP 404 Not Found"),
    ("unknown connector subpath", ("GET", "/connectors/src-running/nope", None), 404, "HTTP 404 Not Found"),
    ("method not allowed", ("DELETE", "/connector-plugins", None), 405, "HTTP 405 Method Not Allowed"),
    ("topics reset unknown path", ("POST", "/connectors/src-running/topics/reset", None), 405, "Method Not Allowed"),
]:
    _add("rest", id_, (method, path, body), *why, status=status)

# -- the connect-magics command (cli.py): exit code 2 and one error line, nothing started -------------------------

for id_, argv, files, *why in [
    ("worker without bootstrap", ["worker"], {}, "--bootstrap-servers (or bootstrap.servers in --config) is required"),
    ("worker missing config file", ["worker", "--config", "{dir}/nope.properties"], {},
     "--config {dir}/nope.properties: No such file or directory"),
    ("worker rest.port word", ["worker", "--config", "{dir}/w.properties"],
     {"w.properties": "bootstrap.servers={b}\nrest.port=http\n"}, "rest.port", "Not a number of type INT"),
    ("worker bad partitions", ["worker", "--config", "{dir}/w.properties"],
     {"w.properties": "bootstrap.servers={b}\ngroup.id=bi-cli\noffset.storage.partitions=0\n"},
     "offset.storage.partitions", "Number of partitions must be positive"),
    ("worker empty bootstrap in file", ["worker", "--config", "{dir}/w.properties"],
     {"w.properties": "bootstrap.servers=\n"}, "--bootstrap-servers (or bootstrap.servers in --config) is required"),
    ("worker unknown converter", ["worker", "--bootstrap-servers", "{b}", "--group-id", "bi-cli", "--config",
                                  "{dir}/w.properties"], {"w.properties": "value.converter=ParquetConverter\n"},
     "value.converter", "Class ParquetConverter could not be found"),
    ("worker rest port word", ["worker", "--bootstrap-servers", "{b}", "--rest-port", "http"], {},
     "argument --rest-port", "invalid int value: 'http'"),
    ("worker unknown executor", ["worker", "--bootstrap-servers", "{b}", "--executor", "gpu"], {},
     "argument --executor", "invalid choice: 'gpu'"),
    ("broker unknown action", ["broker", "restart"], {}, "argument action", "invalid choice: 'restart'"),
    ("demo records word", ["demo", "--records", "many"], {}, "argument --records", "invalid int value"),
]:
    _add("cli", id_, (argv, files), *why)

# -- malformed records written raw into the internal topics: skipped with a warning naming key and reason -------
# (records without a key cannot be written: the internal topics are compacted)

for topic, id_, key, value, *why in [
    ("config", "non-JSON connector config", "connector-bi-g", b"{not json", "connector-bi-g", "not JSON"),
    ("config", "connector config is a list", "connector-bi-g", b"[1]", "connector-bi-g", "not an array"),
    ("config", "connector config without properties", "connector-bi-g", b'{"props": {}}', "connector-bi-g",
     '{"properties": {...}} with string values'),
    ("config", "connector properties not strings", "connector-bi-g", b'{"properties": {"tasks.max": 1}}',
     "connector-bi-g", "with string values"),
    ("config", "connector config is a number", "connector-src-stopped", b"42", "connector-src-stopped",
     "not a number"),
    ("config", "task config bad number", "task-bi-g-x", b'{"properties": {}}', "task-bi-g-x",
     "task-{connector}-{task number}"),
    ("config", "task config not JSON", "task-src-running-0", b"\x00\x01", "task-src-running-0", "not JSON"),
    ("config", "commit with word", "commit-src-running", b'{"tasks": "one"}', "commit-src-running",
     '"tasks": "one"'),
    ("config", "commit negative", "commit-src-running", b'{"tasks": -1}', "commit-src-running", '"tasks": -1'),
    ("config", "target state unknown", "target-state-src-running", b'{"state": "SLEEPING"}', "SLEEPING",
     "src-running"),
    ("config", "target state not an object", "target-state-src-running", b'"STOPPED"', "target-state-src-running",
     "not a string"),
    ("config", "unknown key", "nonsense-key", b"{}", "invalid key", "nonsense-key"),
    ("config", "key not UTF-8", b"\xff\xfe", b"{}", "not UTF-8"),
    ("config", "task config tombstone", "task-src-running-0", None, "unexpectedly null task config",
     "task-src-running-0"),
    ("config", "commit tombstone", "commit-src-running", None, "commit-src-running", '{"tasks": N}', "not null"),
    ("offsets", "offsets key not JSON", "not-json", b'{"position": 1}', "not [connector, partition]"),
    ("offsets", "offsets key wrong arity", '["src-stopped"]', b'{"position": 1}', "not [connector, partition]"),
    ("offsets", "offsets key partition list", '["src-stopped", [1]]', b'{"position": 1}', "partition is not a map"),
    ("offsets", "offsets value not JSON", '["src-stopped", {"filename": "g"}]', b"pos=1", "not JSON"),
    ("offsets", "offsets value a list", '["src-stopped", {"filename": "g"}]', b"[1]", "an offset object",
     "not an array"),
    ("offsets", "offsets key name not a string", '[1, {"filename": "g"}]', b'{"position": 1}',
     "not [connector, partition]"),
    ("status", "status not JSON", "status-connector-src-running", b"RUNNING", "status-connector-src-running",
     "not JSON"),
    ("status", "status unknown state", "status-connector-src-running", b'{"state": "SLEEPY", "worker_id": "w", '
     b'"generation": 1}', "status-connector-src-running", 'invalid state "SLEEPY"'),
    ("status", "status generation word", "status-task-src-running-0", b'{"state": "RUNNING", "worker_id": "w", '
     b'"generation": "one"}', "status-task-src-running-0", 'invalid generation "one"'),
    ("status", "status worker id number", "status-task-src-running-0", b'{"state": "RUNNING", "worker_id": 7, '
     b'"generation": 1}', "invalid worker_id 7"),
    ("status", "status task key without number", "status-task-src-running-x", b'{"state": "RUNNING"}',
     "status-task-src-running-x", "invalid key"),
    ("status", "status is a list", "status-connector-src-running", b"[]", "status-connector-src-running",
     "not an array"),
    ("status", "topic status not an object", "status-topic-bi-in:connector-sink-running", b'{"topic": 5}',
     "status-topic-bi-in:connector-sink-running", "Failed to parse topic status"),
    ("status", "created topic wrong shape", "connect-magics-created-topic-bi-t:connector-src-running", b"{}",
     "createdTopic"),
    ("task-control", "control not JSON", "task-src-running-0", b"{", "task-src-running-0", "not JSON"),
    ("task-control", "control generation word", "task-src-running-0", b'{"generation": "2", "state": "STARTED"}',
     "task-src-running-0", '"generation": N'),
    ("task-control", "control unknown state", "task-src-running-0", b'{"generation": 2, "state": "GO"}',
     "task-src-running-0", "STARTED|PAUSED|STOPPED"),
    ("task-control", "control unknown key", "tasks-src-running-0", b"{}", "tasks-src-running-0",
     "neither task-{connector}-{task} nor metrics-{connector}-{task}"),
    ("task-control", "forwarded request not JSON", "request-bi-1", b"create_connector(x)", "request-bi-1",
     "not JSON"),
    ("task-control", "forwarded answer a list", "answer-bi-1", b"[200]", "answer-bi-1", 'an answer {"status"',
     "not an array"),
    ("task-control", "metrics not an object", "metrics-src-running-0", b"12", "metrics-src-running-0",
     "not a number"),
]:
    _add("record", f"{topic}: {id_}", (topic, key, value), *why)


def of(surface: str) -> list[Case]:
    """The cases of one surface."""
    return [c for c in CASES if c.surface == surface]


def ids(cases: list[Case]) -> list[str]:
    return [c.id for c in cases]
