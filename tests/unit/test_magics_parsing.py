"""Pure parsing of the %connect magics: arguments and connector-config cell bodies (no broker, no shell)."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from connect_magics.notebook.magics import ConnectMagics
from connect_magics.notebook.parsing import (
    HelpShown,
    parse_command,
    parse_config_body,
    parse_json_config,
    parse_properties,
)
from connect_magics.notebook.tables import status_frame, task_metrics_frame

DATABRICKS_MAGICS = {"sql", "python", "scala", "r", "md", "sh", "fs", "run", "pip"}


def test_properties_basic_comments_and_separators() -> None:
    body = """
# a comment
! another comment
connector.class=FileStreamSource
  topic = lines
file: /tmp/in.txt
empty=
"""
    assert parse_properties(body) == {"connector.class": "FileStreamSource", "topic": "lines",
                                      "file": "/tmp/in.txt", "empty": ""}


def test_properties_value_keeps_separators_and_escapes() -> None:
    body = "transforms.x.regex=a=b:c\npath=C\\:\\\\dir\nkey\\=with\\:sep=v\nuni=\\u00e9\\t!"
    assert parse_properties(body) == {"transforms.x.regex": "a=b:c", "path": "C:\\dir", "key=with:sep": "v",
                                      "uni": "é\t!"}


def test_properties_continuation_lines() -> None:
    assert parse_properties("topics=a,\\\n    b,\\\n    c\nx=1") == {"topics": "a,b,c", "x": "1"}


def test_properties_line_without_separator_names_the_line() -> None:
    with pytest.raises(UsageError, match=r"line 2: expected key=value, got 'oops'"):
        parse_properties("a=1\noops\n")


def test_properties_duplicate_key_names_both_lines() -> None:
    with pytest.raises(UsageError, match=r"line 3: key 'a' is given twice \(first on line 1\)"):
        parse_properties("a=1\nb=2\na=3")


def test_properties_empty_key_and_bad_unicode_escape() -> None:
    with pytest.raises(UsageError, match="the key is empty"):
        parse_properties("=value")
    with pytest.raises(UsageError, match=r"line 1: malformed \\uxxxx escape"):
        parse_properties("a=\\u12G4")


def test_json_body_and_value_types() -> None:
    body = '{"connector.class": "FileStreamSource", "tasks.max": 2, "errors.log.enable": true, "x": 1.5}'
    assert parse_config_body(body) == {"connector.class": "FileStreamSource", "tasks.max": "2",
                                       "errors.log.enable": "true", "x": "1.5"}


def test_json_rest_shaped_body_and_name_mismatch() -> None:
    body = '{"name": "src", "config": {"connector.class": "FileStreamSource"}}'
    assert parse_config_body(body, "src") == {"connector.class": "FileStreamSource"}
    with pytest.raises(UsageError, match="names connector 'src' but the command names 'other'"):
        parse_config_body(body, "other")


@pytest.mark.parametrize("body, message", [
    ('{"a": 1,}', r"Config JSON is invalid: .* line 1 column"),
    ('{"a": null}', r"Config key 'a': the value must be a string, number or boolean, not null"),
    ('{"a": {"b": 1}}', r"Config key 'a': .* not dict"),
    ("   \n  ", "The cell is empty"),
])
def test_bad_bodies(body: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_config_body(body)


def test_json_array_is_refused() -> None:
    with pytest.raises(UsageError, match="must be an object of config keys, not list"):
        parse_json_config("[1, 2]")


def test_commands_parse() -> None:
    a = parse_command("start --bootstrap-servers h:1 --group-id g")
    assert (a.command, a.bootstrap_servers, a.group_id, a.embedded) == ("start", "h:1", "g", False)
    assert parse_command("status lines -o st").output == "st"
    a = parse_command("restart lines --include-tasks --only-failed")
    assert (a.include_tasks, a.only_failed) == (True, True)
    assert parse_command("create src --initial-state paused", cell="a=1").initial_state == "PAUSED"
    assert parse_command("validate", cell="a=1").command == "validate"


@pytest.mark.parametrize("line, cell, message", [
    ("", None, "a command is required"),
    ("bogus", None, "invalid choice: 'bogus'"),
    ("status", None, "the following arguments are required: NAME"),
    ("pause a b", None, "unrecognized arguments: b"),
    ("start --group-id", None, "expected one argument"),
    ("status 'unclosed", None, "cannot parse the arguments"),
    ("create src", None, "needs a cell body: use %%connect create"),
    ("status src", "a=1", "takes no cell body"),
    ("create src --initial-state RUNNIN", "a=1", "invalid choice: 'RUNNIN'"),
])
def test_argument_errors(line: str, cell: str | None, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_command(line, cell)


def test_help_raises_help_shown(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(HelpShown):
        parse_command("offsets -h")
    assert "-o VAR" in capsys.readouterr().out


def test_magic_names_do_not_collide_with_databricks() -> None:
    names = set(ConnectMagics.magics["line"]) | set(ConnectMagics.magics["cell"])
    assert names == {"connect"}
    assert not names & DATABRICKS_MAGICS


def test_status_frame_shape() -> None:
    frame = status_frame({"name": "c", "type": "source",
                          "connector": {"state": "RUNNING", "worker_id": "w:1"},
                          "tasks": [{"id": 0, "state": "FAILED", "worker_id": "w:1", "trace": "boom"}]})
    assert list(frame["id"]) == ["connector", "0"]
    assert list(frame["state"]) == ["RUNNING", "FAILED"]
    assert list(frame["trace"]) == ["", "boom"]


def test_task_metrics_frame_has_a_row_per_task() -> None:
    metrics = {
        "sink-task-metrics,connector=b,task=1": {"sink-record-read-total": 5},
        "source-task-metrics,connector=a,task=0": {"source-record-poll-total": 7},
        "sink-task-metrics,connector=b,task=0": {"sink-record-read-total": 3},
        "task-error-metrics,connector=b,task=0": {"total-errors-logged": 0},
        "status-backing-store-metrics": {"status-update-retry-total": 0},
    }
    frame = task_metrics_frame(metrics)
    assert list(frame[["connector", "task", "type"]].itertuples(index=False, name=None)) == [
        ("a", 0, "source"), ("b", 0, "sink"), ("b", 1, "sink")]
    assert list(task_metrics_frame(metrics, "b")["sink-record-read-total"]) == [3, 5]
    empty = task_metrics_frame(metrics, "nothing")
    assert empty.empty and list(empty.columns) == ["connector", "task", "type"]


def test_a_comment_after_the_command_is_ignored() -> None:
    args = parse_command("offsets lines -o offsets      # a pandas DataFrame: edit it and push it back")
    assert (args.command, args.name, args.output) == ("offsets", "lines", "offsets")
    assert parse_command("peek t --property 'key=#x'").property == [("key", "#x")]  # quoted: kept
