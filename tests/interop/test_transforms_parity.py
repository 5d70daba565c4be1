"""Kafka's transformations and predicates side by side: the same connector configs on a real Apache Kafka
Connect worker and on ``connect-magics worker``, outputs compared record by record.

Three kinds of case, each one connector per side:

* ``source`` (schema'd records): a FileStreamSource reads the case's lines (a STRING value, a null key),
  the case's chain transforms them (HoistField, InsertField and Cast first build the structs, keys and
  headers the transformation under test needs) and the worker writes them with JsonConverter
  (``schemas.enable``) for keys, values and headers. Every output record is compared whole: topic, key
  and its schema, value and its schema, headers and their schemas.
* ``sink`` (schemaless records): a FileStreamSink reads topics of plain JSON (``schemas.enable=false``:
  maps, lists, longs, doubles, strings, booleans), the chain transforms them and the sink prints each value
  as Java's ``String.valueOf`` does; the lines are compared (map entries in name order: Java prints a
  HashMap in hash order). Keys and headers are not printed by the sink, so a sink case shows a key or
  header change only through the value (``InsertField`` reveals a renamed topic).
* ``sink`` with schemas (``ss-`` cases): the same, from a topic of JSON with schemas (defaults, a decimal,
  an array, a map, a nested optional struct), the values printed as Java prints a Struct.

A case may expect the task to fail (Kafka fails it too): then both tasks must be FAILED.

Bad configs are validated on both workers (``PUT /connector-plugins/.../config/validate``) and the
answers for the transformation's and predicate's keys compared (values, recommended values, errors),
and each transformation's ``GET /connector-plugins/{class}/config`` too. Known differences are listed
in ``EXPECTED_DIFFERENCES`` with their reason (also in docs/transformations.md); every other comparison
must be equal. ``TRANSFORMS_PARITY_CASES=pattern`` runs only the output cases whose id matches.
"""

from __future__ import annotations

import fnmatch
import json
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import RestClient, wait_until

from connect_magics.local import EmbeddedBroker
from connect_magics.local.connect_worker import JavaConnectWorker
from connect_magics.rest import RestServer

T = "org.apache.kafka.connect.transforms."
P = "org.apache.kafka.connect.transforms.predicates."
JSON = "org.apache.kafka.connect.json.JsonConverter"
SIDES = {"java": "javaside", "ours": "magicsside"}

#: Comparisons known to differ, by label (fnmatch patterns), with the reason (also in docs/transformations.md).
EXPECTED_DIFFERENCES: dict[str, str] = {
    "plugin config ReplaceField$*": "we still accept 'blacklist' and 'whitelist', removed in Kafka 4.0",
    "s-cast-float records": "a schemaless FLOAT32 is a Python float: printed as the double it holds "
                            "(1.0000000200408773E20), where Java prints the Float (1.0E20)",
    "validate TopicNameMatches without pattern": "Kafka shows the JVM's NullPointerException text ('Invalid regex: "
                                                 "Cannot invoke \"String.isEmpty()\" ...'); we say a regular "
                                                 "expression is required",
}


# ------------------------------------------------------------------------------------------------ cases
@dataclass
class Case:
    id: str
    mode: str  # "source" or "sink"
    chain: list[tuple[str, str, dict[str, str]]]  # (alias, class, settings); settings may name a predicate
    lines: list[str] = field(default_factory=list)  # source mode: the file's lines
    predicates: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    outputs: list[str] = field(default_factory=lambda: ["{s}-tf-{id}"])  # source mode: topics written
    inputs: tuple[str, ...] = ("main",)  # sink mode: the input topics read
    fails: bool = False  # Kafka fails the task: ours must fail too

    def config(self, folder: Path) -> dict[str, str]:
        if self.mode == "source":
            config = {"connector.class": "FileStreamSource", "file": str(folder / f"{{s}}-{self.id}.txt"),
                      "topic": f"{{s}}-tf-{self.id}", "topic.creation.default.partitions": "1",
                      "topic.creation.default.replication.factor": "1",
                      "key.converter": JSON, "value.converter": JSON, "header.converter": JSON,
                      "key.converter.schemas.enable": "true", "value.converter.schemas.enable": "true"}
        else:
            config = {"connector.class": "FileStreamSink", "file": str(folder / f"{{s}}-{self.id}.out"),
                      "topics": ",".join(INPUT_TOPICS[t] for t in self.inputs),
                      "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                      "value.converter": JSON,
                      "value.converter.schemas.enable": "true" if self.inputs == ("schema",) else "false"}
        if self.chain:
            config["transforms"] = ",".join(alias for alias, _, _ in self.chain)
        for alias, cls, settings in self.chain:
            config[f"transforms.{alias}.type"] = cls
            config.update({f"transforms.{alias}.{k}": v for k, v in settings.items()})
        if self.predicates:
            config["predicates"] = ",".join(alias for alias, _, _ in self.predicates)
            for alias, cls, settings in self.predicates:
                config[f"predicates.{alias}.type"] = cls
                config.update({f"predicates.{alias}.{k}": v for k, v in settings.items()})
        return config


def hoist(field_name: str = "line", alias: str = "hoist") -> tuple[str, str, dict[str, str]]:
    return alias, T + "HoistField$Value", {"field": field_name}


def insert(alias: str = "insert", variant: str = "Value", **settings: str) -> tuple[str, str, dict[str, str]]:
    return alias, T + f"InsertField${variant}", {k.replace("_", "."): v for k, v in settings.items()}


def cast(spec: str, alias: str = "cast", variant: str = "Value") -> tuple[str, str, dict[str, str]]:
    return alias, T + f"Cast${variant}", {"spec": spec}


TO_KEY = ("tokey", T + "ValueToKey", {"fields": "line"})
STRUCT = [hoist(), insert(topic_field="t", static_field="st", static_value="fixed")]  # {line, t, st}
NESTED = [*STRUCT, hoist("inner", "hoist2"), insert("insert2", static_field="outer", static_value="o")]
KEY_MAP = [("hk", T + "HoistField$Key", {"field": "k"}),
           insert("ik", "Key", static_field="s", static_value="42"), insert("ik2", "Key", topic_field="t")]
NUMBERS = ["42", "-7", "127", "0"]
WHEN = ["2023-11-14 22:13:20", "1969-12-31 23:59:59", "2000-02-29 00:00:00"]
YMD = {"format": "yyyy-MM-dd HH:mm:ss"}
TC = T + "TimestampConverter$"

SOURCE_CASES = [
    # RegexRouter, Filter
    Case("regexrouter", "source", [("route", T + "RegexRouter", {"regex": "(.*)-tf-(.*)",
                                                                 "replacement": "$1-routed-$2"})],
         ["a", "b"], outputs=["{s}-routed-regexrouter"]),
    Case("regexrouter-nomatch", "source", [("route", T + "RegexRouter", {"regex": "nomatch-(.*)",
                                                                         "replacement": "$1"})], ["a"]),
    # InsertField
    Case("insertfield-value", "source", [hoist(), insert(topic_field="t", partition_field="p", static_field="s!",
                                                         static_value="v")], ["a", "b"]),
    Case("insertfield-key", "source", [*STRUCT, TO_KEY, insert("ik", "Key", topic_field="kt!",
                                                               static_field="ks", static_value="x")], ["a"]),
    Case("insertfield-key-schemaless", "source", [("hk", T + "HoistField$Key", {"field": "k"}),
                                                  insert("ik", "Key", topic_field="t", static_field="s",
                                                         static_value="x")], ["a"]),
    Case("insertfield-offset-on-source", "source", [hoist(), insert(offset_field="o")], ["a"], fails=True),
    # ReplaceField
    Case("replacefield-value-exclude", "source", [*STRUCT, ("rf", T + "ReplaceField$Value",
                                                            {"exclude": "t", "renames": "line:text,st:static"})],
         ["a", "b"]),
    Case("replacefield-value-include", "source", [*STRUCT, ("rf", T + "ReplaceField$Value",
                                                            {"include": "line,st", "renames": "st:s"})], ["a"]),
    Case("replacefield-key", "source", [*STRUCT, ("tk", T + "ValueToKey", {"fields": "line,t"}),
                                        ("rf", T + "ReplaceField$Key", {"exclude": "t", "renames": "line:id"})],
         ["a"]),
    # HoistField
    Case("hoistfield-value", "source", [hoist("wrapped")], ["a", ""]),
    Case("hoistfield-key", "source", [*STRUCT, TO_KEY, ("hk", T + "HoistField$Key", {"field": "id"})], ["a"]),
    # ExtractField
    Case("extractfield-value", "source", [*STRUCT, ("ef", T + "ExtractField$Value", {"field": "t"})], ["a"]),
    Case("extractfield-value-v2", "source", [*NESTED, ("ef", T + "ExtractField$Value",
                                                        {"field": "inner.line", "field.syntax.version": "V2"})],
         ["a", "b"]),
    Case("extractfield-value-v2-backticks", "source",
         [hoist(), hoist("in.ner", "hoist2"), ("ef", T + "ExtractField$Value",
                                               {"field": "`in.ner`.line", "field.syntax.version": "v2"})], ["a"]),
    Case("extractfield-value-v1-nested-name", "source", [*NESTED, ("ef", T + "ExtractField$Value",
                                                                   {"field": "inner.line"})], ["a"], fails=True),
    Case("extractfield-key", "source", [*STRUCT, TO_KEY, ("ek", T + "ExtractField$Key", {"field": "line"})],
         ["a"]),
    # Cast
    Case("cast-value-whole-int8", "source", [cast("int8")], NUMBERS),
    Case("cast-value-whole-chain", "source", [cast("int64"), cast("int16", "c2"), cast("float32", "c3"),
                                              cast("string", "c4")], ["70000", "-1", "32768"]),
    Case("cast-value-whole-float", "source", [cast("float64"), cast("int32", "c2")], ["3.75", "-2.5", "1e3"]),
    Case("cast-value-whole-boolean", "source", [cast("int32"), cast("boolean", "c2")], ["0", "5", "-1"]),
    Case("cast-value-string-to-boolean", "source", [cast("boolean")], ["true", "TRUE", "yes", "false"]),
    Case("cast-value-fields", "source", [*STRUCT, cast("line:float64,st:boolean"),
                                         cast("line:int8", "c2")], ["3.5", "-0.25", "300"]),
    Case("cast-value-out-of-range", "source", [cast("int8")], ["300"], fails=True),
    Case("cast-key", "source", [*STRUCT, TO_KEY, cast("line:int64", "ck", "Key")], NUMBERS),
    Case("cast-timestamp-to-int64", "source", [*STRUCT, (
        "tc", TC + "Value", {"field": "line", "target.type": "Timestamp", **YMD}), cast("line:int64,t:string")],
         WHEN),
    # DropHeaders, InsertHeader
    Case("insertheader", "source", [("h1", T + "InsertHeader", {"header": "n", "value.literal": "42"}),
                                    ("h2", T + "InsertHeader", {"header": "b", "value.literal": "true"}),
                                    ("h3", T + "InsertHeader", {"header": "s", "value.literal": "hello world"}),
                                    ("h4", T + "InsertHeader", {"header": "f", "value.literal": "3.5"}),
                                    ("h5", T + "InsertHeader", {"header": "big", "value.literal": "70000"})],
         ["a"]),
    Case("dropheaders", "source", [("h1", T + "InsertHeader", {"header": "a", "value.literal": "1"}),
                                   ("h2", T + "InsertHeader", {"header": "b", "value.literal": "x"}),
                                   ("h3", T + "InsertHeader", {"header": "a", "value.literal": "2"}),
                                   ("drop", T + "DropHeaders", {"headers": "a,zzz"})], ["a"]),
    # HeaderFrom
    Case("headerfrom-value-move", "source", [*STRUCT, ("hf", T + "HeaderFrom$Value", {
        "fields": "t,st", "headers": "ht,hst", "operation": "move"})], ["a", "b"]),
    Case("headerfrom-value-copy", "source", [*STRUCT, ("hf", T + "HeaderFrom$Value", {
        "fields": "line", "headers": "hl", "operation": "copy"})], ["a"]),
    Case("headerfrom-key", "source", [*STRUCT, ("tk", T + "ValueToKey", {"fields": "line,st"}), (
        "hf", T + "HeaderFrom$Key", {"fields": "st", "headers": "k", "operation": "move"})], ["a"]),
    # MaskField
    Case("maskfield-value", "source", [*STRUCT, cast("line:int32"), ("mf", T + "MaskField$Value",
                                                                     {"fields": "line,t"})], NUMBERS[:2]),
    Case("maskfield-value-replacement", "source", [*STRUCT, cast("line:int16"), (
        "mf", T + "MaskField$Value", {"fields": "line,t", "replacement": "99"})], NUMBERS[:2]),
    Case("maskfield-value-replacement-float", "source", [*STRUCT, cast("line:float64"), (
        "mf", T + "MaskField$Value", {"fields": "line", "replacement": "-1.5"})], NUMBERS[:2]),
    Case("maskfield-value-boolean-replacement", "source", [*STRUCT, cast("line:boolean"), (
        "mf", T + "MaskField$Value", {"fields": "line", "replacement": "1"})], ["true"], fails=True),
    Case("maskfield-key", "source", [*STRUCT, TO_KEY, ("mf", T + "MaskField$Key", {"fields": "line"})], ["a"]),
    # SetSchemaMetadata
    Case("setschemametadata-value-string", "source", [("ssm", T + "SetSchemaMetadata$Value", {
        "schema.name": "com.example.Line", "schema.version": "3"})], ["a"], fails=True),
    Case("setschemametadata-value-struct", "source", [*STRUCT, ("ssm", T + "SetSchemaMetadata$Value", {
        "schema.name": "com.example.Row"})], ["a"]),
    Case("setschemametadata-key", "source", [*STRUCT, TO_KEY, ("ssm", T + "SetSchemaMetadata$Key", {
        "schema.version": "7"})], ["a"]),
    Case("setschemametadata-none", "source", [("ssm", T + "SetSchemaMetadata$Value", {})], ["a"], fails=True),
    # TimestampConverter
    Case("timestampconverter-value-to-unix", "source", [("tc", TC + "Value", {"target.type": "unix", **YMD})],
         WHEN),
    Case("timestampconverter-value-unix-seconds", "source", [
        ("tc", TC + "Value", {"target.type": "unix", "unix.precision": "seconds", **YMD}),
        ("tc2", TC + "Value", {"target.type": "string", "unix.precision": "seconds",
                               "format": "EEE, d MMM yyyy hh:mm:ss a z"})], WHEN),
    Case("timestampconverter-value-unix-micros", "source", [
        ("tc", TC + "Value", {"target.type": "unix", "unix.precision": "microseconds", **YMD})], WHEN),
    Case("timestampconverter-value-date-time", "source", [
        *STRUCT, ("tc", TC + "Value", {"field": "line", "target.type": "Timestamp", **YMD}),
        ("tc2", TC + "Value", {"field": "line", "target.type": "Date"})], WHEN),
    Case("timestampconverter-value-time", "source", [
        ("tc", TC + "Value", {"target.type": "Timestamp", **YMD}), ("tc2", TC + "Value", {"target.type": "Time"})],
         WHEN),
    Case("timestampconverter-value-iso", "source", [
        ("tc", TC + "Value", {"target.type": "Timestamp", **YMD}),
        ("tc2", TC + "Value", {"target.type": "string", "format": "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"})], WHEN),
    Case("timestampconverter-value-unparseable", "source", [("tc", TC + "Value", {"target.type": "unix", **YMD})],
         ["not a date"], fails=True),
    Case("timestampconverter-key", "source", [*STRUCT, TO_KEY, (
        "tc", TC + "Key", {"field": "line", "target.type": "unix", "format": "yyyy-MM-dd HH:mm:ss"})], WHEN),
    # TimestampRouter: FileStreamSource stamps records with the time they were read; a year does not differ
    Case("timestamprouter", "source", [("tr", T + "TimestampRouter", {"topic.format": "${topic}-at-${timestamp}",
                                                                     "timestamp.format": "'y'yyyy"})],
         ["a"], outputs=["{s}-tf-timestamprouter-at-y{year}"]),
    # ValueToKey
    Case("valuetokey", "source", [*STRUCT, ("tk", T + "ValueToKey", {"fields": "t,line"})], ["a", "b"]),
    Case("valuetokey-unknown-field", "source", [*STRUCT, ("tk", T + "ValueToKey", {"fields": "nope"})], ["a"],
         fails=True),
    # Flatten
    Case("flatten-value", "source", [*NESTED, hoist("top", "hoist3"), ("fl", T + "Flatten$Value", {})], ["a"]),
    Case("flatten-value-delimiter", "source", [*NESTED, ("fl", T + "Flatten$Value", {"delimiter": "_"})], ["a"]),
    Case("flatten-key", "source", [*NESTED, ("tk", T + "ValueToKey", {"fields": "inner"}),
                                   ("fl", T + "Flatten$Key", {"delimiter": "/"})], ["a"]),
    # Schemaless keys on the source side: HoistField$Key on the null key makes a map {k: null}
    Case("key-schemaless-cast", "source", [*KEY_MAP, cast("s:int32,t:string", "ck", "Key")], ["a"]),
    Case("key-schemaless-cast-whole", "source", [*KEY_MAP, ("ek", T + "ExtractField$Key", {"field": "s"}),
                                                 cast("int16", "ck", "Key")], ["a"]),
    Case("key-schemaless-maskfield", "source", [*KEY_MAP, ("mf", T + "MaskField$Key", {"fields": "s,t,k"})], ["a"]),
    Case("key-schemaless-replacefield", "source", [*KEY_MAP, ("rf", T + "ReplaceField$Key", {
        "exclude": "k", "renames": "s:static"})], ["a"]),
    Case("key-schemaless-flatten", "source", [*KEY_MAP, ("hk2", T + "HoistField$Key", {"field": "outer"}),
                                              ("fl", T + "Flatten$Key", {"delimiter": "_"})], ["a"]),
    Case("key-schemaless-extractfield-v2", "source", [*KEY_MAP, ("hk2", T + "HoistField$Key", {"field": "outer"}),
                                                      ("ek", T + "ExtractField$Key", {
                                                          "field": "outer.t", "field.syntax.version": "V2"})], ["a"]),
    Case("key-schemaless-headerfrom", "source", [*KEY_MAP, ("hf", T + "HeaderFrom$Key", {
        "fields": "s,nope", "headers": "hs,hn", "operation": "move"})], ["a"]),
    Case("key-schemaless-timestampconverter", "source", [
        ("hk", T + "HoistField$Key", {"field": "k"}),
        insert("ik", "Key", static_field="when", static_value="2023-11-14 22:13:20"),
        ("tc", TC + "Key", {"field": "when", "target.type": "unix", "unix.precision": "seconds", **YMD})], ["a"]),
    Case("key-schemaless-setschemametadata", "source", [*KEY_MAP, ("ssm", T + "SetSchemaMetadata$Key", {
        "schema.name": "x"})], ["a"], fails=True),
    # Predicates on the source side: every record is on one topic
    Case("predicate-topicnamematches", "source", [("drop", T + "Filter", {"predicate": "other"})], ["a"],
         predicates=[("other", P + "TopicNameMatches", {"pattern": ".*-other"})]),
    Case("predicate-topicnamematches-negate", "source", [
        *STRUCT, ("ssm", T + "SetSchemaMetadata$Value", {"schema.name": "x.Y", "predicate": "mine",
                                                         "negate": "true"})], ["a"],
         predicates=[("mine", P + "TopicNameMatches", {"pattern": ".*-tf-.*"})]),
    Case("predicate-hasheaderkey", "source", [
        ("h1", T + "InsertHeader", {"header": "flag", "value.literal": "1"}),
        ("drop", T + "DropHeaders", {"headers": "flag", "predicate": "has"})], ["a"],
         predicates=[("has", P + "HasHeaderKey", {"name": "flag"})]),
]

SINK_CASES = [
    Case("s-insertfield", "sink", [insert(topic_field="t", partition_field="p", offset_field="o",
                                          timestamp_field="ts", static_field="s", static_value="v")]),
    Case("s-replacefield", "sink", [("rf", T + "ReplaceField$Value", {"exclude": "nested,tags",
                                                                      "renames": "id:ident,name:who"})]),
    Case("s-replacefield-include", "sink", [("rf", T + "ReplaceField$Value", {"include": "id,score"})]),
    Case("s-hoistfield", "sink", [hoist("all")]),
    Case("s-extractfield", "sink", [("ef", T + "ExtractField$Value", {"field": "name"})]),
    Case("s-extractfield-v2", "sink", [("ef", T + "ExtractField$Value", {"field": "nested.deep.y",
                                                                         "field.syntax.version": "V2"})]),
    Case("s-extractfield-v2-missing", "sink", [("ef", T + "ExtractField$Value", {"field": "nested.nope.y",
                                                                                 "field.syntax.version": "V2"})]),
    Case("s-cast", "sink", [cast("id:int8,score:int32,ok:string,name:string,big:int16")]),
    Case("s-cast-float", "sink", [cast("id:float64,score:float32,ok:int64")]),
    Case("s-cast-boolean", "sink", [cast("id:boolean,score:boolean,name:boolean")]),
    Case("s-cast-missing-field", "sink", [cast("missing:int32")]),
    Case("s-cast-map", "sink", [cast("nested:string")], fails=True),
    Case("s-flatten", "sink", [("fl", T + "Flatten$Value", {})]),
    Case("s-flatten-delimiter", "sink", [("fl", T + "Flatten$Value", {"delimiter": "__"})]),
    Case("s-maskfield", "sink", [("mf", T + "MaskField$Value", {"fields": "name,score,ok,tags,nested,id,missing"})]),
    Case("s-maskfield-replacement", "sink", [("mf", T + "MaskField$Value", {"fields": "id,name,score",
                                                                            "replacement": "12"})]),
    Case("s-maskfield-replacement-boolean", "sink", [("mf", T + "MaskField$Value", {"fields": "ok",
                                                                                    "replacement": "1"})],
         fails=True),
    Case("s-timestampconverter", "sink", [
        ("tc1", TC + "Value", {"field": "when", "target.type": "unix", "unix.precision": "seconds", **YMD}),
        ("tc2", TC + "Value", {"field": "at", "target.type": "string", "format": "yyyy-MM-dd'T'HH:mm:ss.SSSX"})]),
    Case("s-timestampconverter-nanos", "sink", [
        ("tc1", TC + "Value", {"field": "at", "target.type": "unix", "unix.precision": "nanoseconds"})]),
    Case("s-timestampconverter-date-string", "sink", [
        ("tc1", TC + "Value", {"field": "when", "target.type": "Date", **YMD}),
        ("tc2", TC + "Value", {"field": "when", "target.type": "string", "format": "dd/MM/yy"})]),
    Case("s-headerfrom-move", "sink", [("hf", T + "HeaderFrom$Value", {"fields": "id,name", "headers": "a,b",
                                                                       "operation": "move"})]),
    Case("s-valuetokey-then-hoist", "sink", [("tk", T + "ValueToKey", {"fields": "id,name"})]),
    Case("s-setschemametadata", "sink", [("ssm", T + "SetSchemaMetadata$Value", {"schema.name": "x"})],
         fails=True),
    Case("s-timestamprouter", "sink", [("tr", T + "TimestampRouter", {"timestamp.format": "yyyy.MM.dd-HH"}),
                                       insert(topic_field="t")]),
    Case("s-regexrouter", "sink", [("rr", T + "RegexRouter", {"regex": "tf-in-(main)-(.*)",
                                                              "replacement": "$2/$1"}), insert(topic_field="t")]),
    # Predicates: records of two topics, some with headers, one a tombstone
    Case("s-predicate-hasheaderkey", "sink", [("drop", T + "Filter", {"predicate": "h"})],
         predicates=[("h", P + "HasHeaderKey", {"name": "h1"})], inputs=("main", "other")),
    Case("s-predicate-hasheaderkey-negate", "sink", [("drop", T + "Filter", {"predicate": "h", "negate": "true"})],
         predicates=[("h", P + "HasHeaderKey", {"name": "h1"})], inputs=("main", "other")),
    Case("s-predicate-tombstone", "sink", [("drop", T + "Filter", {"predicate": "t"})],
         predicates=[("t", P + "RecordIsTombstone", {})], inputs=("main", "other")),
    Case("s-predicate-tombstone-negate", "sink", [("drop", T + "Filter", {"predicate": "t", "negate": "true"})],
         predicates=[("t", P + "RecordIsTombstone", {})], inputs=("main", "other")),
    Case("s-predicate-topicnamematches", "sink", [
        insert(topic_field="from", predicate="m")], predicates=[("m", P + "TopicNameMatches",
                                                                 {"pattern": "tf-in-main-.*"})],
         inputs=("main", "other")),
]

# Sink cases with schemas: JSON with schemas (a struct with defaults, a decimal, an array, a map, a nested
# optional struct) through JsonConverter, printed as Java prints a Struct.
SCHEMA_ONLY = ("schema",)
SINK_SCHEMA_CASES = [
    Case("ss-none", "sink", [], inputs=SCHEMA_ONLY),
    Case("ss-cast", "sink", [cast("id:int8,price:string,score:int32,flag:string,name:string")], inputs=SCHEMA_ONLY),
    Case("ss-cast-no-default", "sink", [("cast", T + "Cast$Value", {"spec": "name:string,flag:int8",
                                                                    "replace.null.with.default": "false"})],
         inputs=SCHEMA_ONLY),
    Case("ss-maskfield", "sink", [("mf", T + "MaskField$Value", {"fields": "id,name,price,tags,attrs,score,flag"})],
         inputs=SCHEMA_ONLY),
    Case("ss-maskfield-replacement", "sink", [("mf", T + "MaskField$Value", {"fields": "id,price,score,name",
                                                                             "replacement": "7"})],
         inputs=SCHEMA_ONLY),
    Case("ss-flatten-map", "sink", [("fl", T + "Flatten$Value", {"delimiter": "_"})], inputs=SCHEMA_ONLY,
         fails=True),
    Case("ss-flatten", "sink", [("rf", T + "ReplaceField$Value", {"exclude": "attrs"}),
                                ("fl", T + "Flatten$Value", {"delimiter": "_"})], inputs=SCHEMA_ONLY),
    Case("ss-timestampconverter", "sink", [
        ("tc1", TC + "Value", {"field": "at", "target.type": "Timestamp"}),
        ("tc2", TC + "Value", {"field": "at", "target.type": "string", "format": "yyyy-MM-dd HH:mm:ss.SSS"})],
         inputs=SCHEMA_ONLY),
    Case("ss-timestampconverter-date", "sink", [("tc1", TC + "Value", {"field": "at", "target.type": "Date"}),
                                                cast("at:string")], inputs=SCHEMA_ONLY),
    Case("ss-extractfield-v2", "sink", [("ef", T + "ExtractField$Value", {"field": "inner.y",
                                                                          "field.syntax.version": "V2"})],
         inputs=SCHEMA_ONLY),
    Case("ss-extractfield-v2-no-default", "sink", [("ef", T + "ExtractField$Value", {
        "field": "inner.y", "field.syntax.version": "V2", "replace.null.with.default": "false"})], inputs=SCHEMA_ONLY),
    Case("ss-replacefield-no-default", "sink", [("rf", T + "ReplaceField$Value", {
        "exclude": "tags", "renames": "id:ident", "replace.null.with.default": "false"})], inputs=SCHEMA_ONLY),
    Case("ss-insertfield", "sink", [insert(topic_field="t", static_field="s", static_value="v",
                                           offset_field="o!")], inputs=SCHEMA_ONLY),
    Case("ss-headerfrom-move", "sink", [("hf", T + "HeaderFrom$Value", {"fields": "id,name", "headers": "a,b",
                                                                        "operation": "move"})], inputs=SCHEMA_ONLY),
    Case("ss-hoistfield", "sink", [hoist("all")], inputs=SCHEMA_ONLY),
    Case("ss-setschemametadata", "sink", [("ssm", T + "SetSchemaMetadata$Value", {"schema.name": "x.Y"})],
         inputs=SCHEMA_ONLY),
    Case("ss-valuetokey", "sink", [("tk", T + "ValueToKey", {"fields": "id,inner"})], inputs=SCHEMA_ONLY),
]

CASES = [case for case in SOURCE_CASES + SINK_CASES + SINK_SCHEMA_CASES
         if fnmatch.fnmatchcase(case.id, os.environ.get("TRANSFORMS_PARITY_CASES", "*"))]

#: The sink cases' input: plain JSON values (schemaless), a key as a string, some headers.
MAIN_RECORDS: list[tuple[str | None, Any, list[tuple[str, bytes]]]] = [
    ("k1", {"id": 1, "name": "ann", "score": 2.5, "ok": True, "big": 70000,
            "nested": {"x": 1, "deep": {"y": "z"}}, "at": 1700000000123, "when": "2023-11-14 22:13:20",
            "tags": ["a", "b"]}, [("h1", b"v1")]),
    ("k2", {"id": 300, "name": "bob", "score": -0.75, "ok": False, "big": -5,
            "nested": {"x": 2, "deep": {"y": "w"}}, "at": -1001, "when": "1969-12-31 23:59:59",
            "tags": []}, []),
    (None, {"id": -129, "name": "", "score": 1e20, "ok": True, "big": 0, "nested": {"x": 0, "deep": {"y": ""}},
            "at": 0, "when": "2000-02-29 12:00:00", "tags": ["c"]}, [("h1", b"x"), ("h2", b"y")]),
]
OTHER_RECORDS: list[tuple[str | None, Any, list[tuple[str, bytes]]]] = [
    ("o1", {"id": 7, "name": "other"}, [("h1", b"o")]),
    ("o2", None, []),
    ("o3", {"id": 8, "name": "more"}, []),
]
ROW_SCHEMA = {"type": "struct", "name": "Row", "optional": False, "fields": [
    {"field": "id", "type": "int32", "optional": False},
    {"field": "name", "type": "string", "optional": True, "default": "anon"},
    {"field": "price", "type": "bytes", "optional": False, "name": "org.apache.kafka.connect.data.Decimal",
     "version": 1, "parameters": {"scale": "2"}},
    {"field": "at", "type": "int64", "optional": False},
    {"field": "tags", "type": "array", "items": {"type": "string", "optional": False}, "optional": False},
    {"field": "attrs", "type": "map", "keys": {"type": "string", "optional": False},
     "values": {"type": "int32", "optional": False}, "optional": False},
    {"field": "inner", "type": "struct", "optional": True, "fields": [
        {"field": "x", "type": "int64", "optional": False},
        {"field": "y", "type": "string", "optional": True, "default": "why"}]},
    {"field": "score", "type": "double", "optional": False},
    {"field": "flag", "type": "boolean", "optional": True, "default": True},
]}
SCHEMA_RECORDS: list[tuple[str | None, Any, list[tuple[str, bytes]]]] = [
    ("r1", {"schema": ROW_SCHEMA, "payload": {"id": 1, "name": None, "price": "AJw=", "at": 1700000000123,
                                              "tags": ["a", "b"], "attrs": {"k": 1}, "inner": {"x": 5, "y": None},
                                              "score": 2.5, "flag": None}}, []),
    ("r2", {"schema": ROW_SCHEMA, "payload": {"id": 300, "name": "bo", "price": "/2Q=", "at": -1001, "tags": [],
                                              "attrs": {}, "inner": None, "score": -0.75, "flag": False}}, []),
]
INPUT_TOPICS: dict[str, str] = {}


# --------------------------------------------------------------------------------------- reading outputs
def parse_java_text(text: str) -> Any:
    """A line FileStreamSink printed (Java's ``String.valueOf``) as a comparable value: structs keep their field
    order, maps are sorted by key (Java prints a HashMap in hash order). Test values hold no ``,{}[]=``.

    >>> parse_java_text("{b=1, a=[x, y]}")
    ['map', ('a', ['list', 'x', 'y']), ('b', '1')]
    """
    def value(i: int) -> tuple[Any, int]:
        if text.startswith("Struct{", i):
            return entries(i + 7, ",", "struct")
        if text.startswith("{", i):
            return entries(i + 1, ", ", "map")
        if text.startswith("[", i):
            items, i = [], i + 1
            while not text.startswith("]", i):
                item, i = value(i)
                items.append(item)
                if text.startswith(", ", i):
                    i += 2
            return ["list", *items], i + 1
        end = i
        while end < len(text) and text[end] not in ",}]":
            end += 1
        return text[i:end], end

    def entries(i: int, separator: str, kind: str) -> tuple[Any, int]:
        out = []
        while not text.startswith("}", i):
            eq = text.index("=", i)
            item, end = value(eq + 1)
            out.append((text[i:eq], item))
            i = end + len(separator) if text.startswith(separator, end) else end
        return [kind, *(sorted(out, key=repr) if kind == "map" else out)], i + 1

    parsed, end = value(0)
    return parsed if end == len(text) else text


def read_topic(bootstrap: str, topic: str) -> list[dict[str, Any]]:
    """Every record of partition 0 of ``topic``: key, value and headers as parsed JSON."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "tf-parity-reader", "enable.auto.commit": False})
    try:
        partition = TopicPartition(topic, 0)
        _, high = consumer.get_watermark_offsets(partition, timeout=10)
        consumer.assign([TopicPartition(topic, 0, 0)])
        records: list[dict[str, Any]] = []
        while len(records) < high:
            msg = consumer.poll(5)
            assert msg is not None, f"{topic}: read {len(records)} of {high} records"
            if msg.error():
                continue
            records.append({"topic": msg.topic(),
                            "key": None if msg.key() is None else json.loads(msg.key()),
                            "value": None if msg.value() is None else json.loads(msg.value()),
                            "headers": [(k, None if v is None else json.loads(v)) for k, v in msg.headers() or []]})
        return records
    finally:
        consumer.close()


# ------------------------------------------------------------------------------------------------ runs
@dataclass
class Outcome:
    state: str
    records: Any  # source: the output records; sink: the printed lines, parsed


class Side:
    def __init__(self, name: str, url: str) -> None:
        self.name, self.token, self.client = name, SIDES[name], RestClient(url)

    def fill(self, obj: Any) -> Any:
        return json.loads(json.dumps(obj).replace("{s}", self.token))

    def unfill(self, obj: Any) -> Any:
        return json.loads(json.dumps(obj).replace(self.token, "{s}"))

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        status, answer, _ = self.client(method, self.fill(path), None if body is None else self.fill(body))
        return status, answer

    def task_state(self, name: str) -> str | None:
        status, body = self.call("GET", f"/connectors/{name}/status")
        if status != 200 or not body["tasks"]:
            return None
        return body["tasks"][0]["state"]

    def offsets(self, name: str) -> list[dict[str, Any]]:
        status, body = self.call("GET", f"/connectors/{name}/offsets")
        return body["offsets"] if status == 200 else []


def _done(side: Side, case: Case, folder: Path, input_ends: dict[str, int]) -> bool:
    name = f"{{s}}-tf-{case.id}"
    state = side.task_state(name)
    if state == "FAILED":
        return True
    if case.fails or state != "RUNNING":
        return False
    offsets = side.offsets(name)
    if case.mode == "source":
        size = (folder / side.fill(f"{{s}}-{case.id}.txt")).stat().st_size
        return bool(offsets) and offsets[0]["offset"]["position"] == size
    reached = {o["partition"]["kafka_topic"]: o["offset"]["kafka_offset"] for o in offsets}
    return all(reached.get(INPUT_TOPICS[t]) == input_ends[t] for t in case.inputs)


@pytest.fixture(scope="module")
def outcomes(java_connect: JavaConnectWorker, magics_worker: RestServer, broker: EmbeddedBroker,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, Outcome]]]:
    """Runs every case on both workers at once and collects each side's outcome, by case id."""
    import datetime
    import uuid

    folder = tmp_path_factory.mktemp("tf-parity")
    suffix = uuid.uuid4().hex[:6]
    INPUT_TOPICS.update(main=f"tf-in-main-{suffix}", other=f"tf-in-other-{suffix}", schema=f"tf-in-schema-{suffix}")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    for future in admin.create_topics([NewTopic(t, 1, 1) for t in INPUT_TOPICS.values()]).values():
        future.result()
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    now = int(time.time() * 1000)  # recent: the broker's retention keeps the records
    for key, records in (("main", MAIN_RECORDS), ("other", OTHER_RECORDS), ("schema", SCHEMA_RECORDS)):
        for k, v, headers in records:
            producer.produce(INPUT_TOPICS[key], key=k, value=None if v is None else json.dumps(v),
                             headers=headers, timestamp=now + len(k or ""))
    assert producer.flush(30) == 0
    input_ends = {"main": len(MAIN_RECORDS), "other": len(OTHER_RECORDS), "schema": len(SCHEMA_RECORDS)}

    sides = [Side("java", java_connect.url), Side("ours", magics_worker.url)]
    for side in sides:
        for case in CASES:
            if case.mode == "source":
                (folder / side.fill(f"{{s}}-{case.id}.txt")).write_text("".join(f"{line}\n" for line in case.lines))
            status, body = side.call("POST", "/connectors", {"name": f"{{s}}-tf-{case.id}",
                                                             "config": case.config(folder)})
            assert status == 201, f"{side.name} {case.id}: {body}"
    pending = {(side.name, case.id): (side, case) for side in sides for case in CASES}

    def all_done() -> bool:
        for key, (side, case) in list(pending.items()):
            try:
                done = _done(side, case, folder, input_ends)
            except (OSError, KeyError, IndexError, TypeError):  # not started yet, or no offsets yet
                done = False
            if done:
                del pending[key]
        return not pending
    try:
        wait_until(all_done, 180, 0.5, message="every case done on both sides")
    except AssertionError:
        pass  # the cases still pending fail in their own test
    year = datetime.datetime.now(datetime.timezone.utc).year
    results: dict[str, dict[str, Outcome]] = {}
    for case in CASES:
        results[case.id] = {}
        for side in sides:
            state = side.task_state(f"{{s}}-tf-{case.id}") or "?"
            if (side.name, case.id) in pending:
                state = f"{state}, not done after 180 s (offsets {side.offsets(f'{{s}}-tf-{case.id}')})"
            if state == "FAILED":
                records: Any = None
            elif case.mode == "source":
                records = []
                for topic in case.outputs:
                    records.extend(read_topic(broker.bootstrap_servers,
                                              side.fill(topic.format(s="{s}", id=case.id, year=year))))
                records = side.unfill(records)
            else:
                out = folder / side.fill(f"{{s}}-{case.id}.out")
                lines = out.read_text().splitlines() if out.exists() else []
                records = [parse_java_text(line) for line in lines]
                if len(case.inputs) > 1:
                    records = sorted(records, key=json.dumps)
            results[case.id][side.name] = Outcome(state, records)
    yield results
    # many requests at once: Kafka Connect applies the deletes of one herder tick together (one at a time: 30 s)
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda sc: sc[0].call("DELETE", f"/connectors/{{s}}-tf-{sc[1].id}"),
                      [(side, case) for side in sides for case in CASES]))


def expected_difference(label: str) -> str | None:
    return next((reason for pattern, reason in EXPECTED_DIFFERENCES.items() if fnmatch.fnmatchcase(label, pattern)),
                None)


@pytest.fixture
def check(transforms_tally: Any) -> Any:
    """``check(label, theirs, ours)``: equal, or different if the label is an expected difference; tallied."""
    def compare(label: str, theirs: Any, ours: Any) -> None:
        reason = expected_difference(label)
        if reason is None:
            assert ours == theirs, f"{label}: Kafka Connect gave {theirs!r}, we gave {ours!r}"
            transforms_tally.identical.append(label)
        else:
            assert ours != theirs, f"{label}: now equal; remove it from EXPECTED_DIFFERENCES ({reason})"
            transforms_tally.different.append(label)
    return compare


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_same_output(outcomes: dict[str, dict[str, Outcome]], case: Case, check: Any) -> None:
    java, ours = outcomes[case.id]["java"], outcomes[case.id]["ours"]
    assert java.state == ("FAILED" if case.fails else "RUNNING"), f"Kafka Connect: {case.id} is {java.state}"
    check(f"{case.id} task state", java.state, ours.state)
    if not case.fails:
        assert java.records, f"{case.id}: Kafka Connect wrote nothing"
        check(f"{case.id} records", java.records, ours.records)


# ------------------------------------------------------------------------------------------ validation
@pytest.fixture(scope="module")
def sides(java_connect: JavaConnectWorker, magics_worker: RestServer) -> tuple[Side, Side]:
    return Side("java", java_connect.url), Side("ours", magics_worker.url)


TRANSFORMATION_CLASSES = sorted({cls for case in CASES for _, cls, _ in case.chain + case.predicates}
                                | {T + "TimestampConverter$Key", T + "Flatten$Key", T + "ReplaceField$Key"})


@pytest.mark.parametrize("plugin", TRANSFORMATION_CLASSES, ids=[c.rsplit(".", 1)[1] for c in TRANSFORMATION_CLASSES])
def test_plugin_config(sides: tuple[Side, Side], plugin: str, check: Any) -> None:
    java, ours = (side.call("GET", f"/connector-plugins/{plugin}/config") for side in sides)
    check(f"plugin config {plugin.rsplit('.', 1)[1]}", java, ours)


BAD_CONFIGS: dict[str, tuple[str, dict[str, str]]] = {
    "Cast without spec": (T + "Cast$Value", {}),
    "Cast with an empty spec": (T + "Cast$Value", {"spec": ""}),
    "Cast to an unknown type": (T + "Cast$Value", {"spec": "a:bogus"}),
    "Cast to bytes": (T + "Cast$Value", {"spec": "a:bytes"}),
    "Cast of the whole value and a field": (T + "Cast$Key", {"spec": "int8,a:int16"}),
    "Cast with three parts": (T + "Cast$Value", {"spec": "a:b:c"}),
    "DropHeaders with no headers": (T + "DropHeaders", {"headers": ""}),
    "ExtractField with a bad syntax version": (T + "ExtractField$Value", {"field": "a", "field.syntax.version": "V3"}),
    "ExtractField without field": (T + "ExtractField$Key", {}),
    "Flatten with a null delimiter": (T + "Flatten$Value", {"delimiter": None}),  # type: ignore[dict-item]
    "HeaderFrom with a bad operation": (T + "HeaderFrom$Value", {"fields": "a", "headers": "b", "operation": "x"}),
    "HeaderFrom without fields": (T + "HeaderFrom$Key", {"headers": "b", "operation": "copy"}),
    "HeaderFrom with more headers": (T + "HeaderFrom$Value", {"fields": "a", "headers": "b,c", "operation": "copy"}),
    "InsertHeader without value": (T + "InsertHeader", {"header": "h"}),
    "InsertField without fields": (T + "InsertField$Value", {}),
    "InsertField static without value": (T + "InsertField$Value", {"static.field": "s"}),
    "MaskField with an empty replacement": (T + "MaskField$Value", {"fields": "a", "replacement": ""}),
    "MaskField without fields": (T + "MaskField$Key", {}),
    "ReplaceField with a bad rename": (T + "ReplaceField$Value", {"renames": "a"}),
    "SetSchemaMetadata with a bad version": (T + "SetSchemaMetadata$Value", {"schema.version": "x"}),
    "SetSchemaMetadata with nothing": (T + "SetSchemaMetadata$Value", {}),
    "TimestampConverter with a bad type": (T + "TimestampConverter$Value", {"target.type": "bogus"}),
    "TimestampConverter with a bad precision": (T + "TimestampConverter$Value", {"target.type": "unix",
                                                                                "unix.precision": "days"}),
    "TimestampConverter string without format": (T + "TimestampConverter$Value", {"target.type": "string"}),
    "TimestampConverter with a bad format": (T + "TimestampConverter$Value", {"target.type": "string",
                                                                             "format": "yyyy-bb"}),
    "TimestampRouter with a bad format": (T + "TimestampRouter", {"timestamp.format": "yyyy-bb"}),
    "ValueToKey without fields": (T + "ValueToKey", {}),
    "ValueToKey with empty fields": (T + "ValueToKey", {"fields": ""}),
    "RegexRouter with a bad regex": (T + "RegexRouter", {"regex": "(", "replacement": "x"}),
    "TopicNameMatches with a bad pattern": (P + "TopicNameMatches", {"pattern": "("}),
    "TopicNameMatches without pattern": (P + "TopicNameMatches", {}),
    "HasHeaderKey without name": (P + "HasHeaderKey", {}),
}


@pytest.mark.parametrize("label", list(BAD_CONFIGS))
def test_validation_messages(sides: tuple[Side, Side], label: str, check: Any) -> None:
    cls, settings = BAD_CONFIGS[label]
    kind = "predicates" if cls.startswith(P) else "transforms"
    config = {"connector.class": "FileStreamSink", "name": "v", "topics": "t", "file": "/tmp/x", kind: "x",
              f"{kind}.x.type": cls, **{f"{kind}.x.{k}": v for k, v in settings.items()}}
    if kind == "predicates":
        config.update({"transforms": "f", "transforms.f.type": T + "Filter", "transforms.f.predicate": "x"})
    answers = []
    for side in sides:
        status, body = side.call("PUT", "/connector-plugins/FileStreamSink/config/validate", config)
        assert status == 200, f"{side.name}: {body}"
        answers.append({c["value"]["name"]: _without_version(c["value"]) for c in body["configs"]
                        if c["value"]["name"].startswith(f"{kind}.x.")})
    check(f"validate {label}", answers[0], {k: v for k, v in answers[1].items() if k in answers[0]})
    assert any(v["errors"] for v in answers[0].values()) or label in CONFIGURE_TIME, \
        f"{label}: Kafka Connect found no error"


def _without_version(value: dict[str, Any]) -> dict[str, Any]:
    """A ConfigValue, the plugin versions (which differ) replaced by a placeholder."""
    if value["name"].endswith(".plugin.version"):
        return {**value, "value": "<version>", "recommended_values": ["<version>"] * len(value["recommended_values"])}
    return value


#: Errors Kafka finds only when the task configures the transformation, not when a config is validated.
CONFIGURE_TIME = {"Cast of the whole value and a field", "HeaderFrom with more headers", "InsertField without fields",
                  "InsertField static without value", "SetSchemaMetadata with nothing",
                  "TimestampConverter string without format", "TimestampConverter with a bad format",
                  "TimestampRouter with a bad format", "Flatten with a null delimiter"}
