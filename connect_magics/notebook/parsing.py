"""Pure parsing for the ``%connect`` / ``%%connect`` magics: argument lines and connector-config cell bodies.

Nothing here touches Kafka or IPython's shell; every bad input raises :class:`UsageError` (so the cell fails)
with a message naming the offending line, key or argument.

>>> parse_config_body("connector.class=FileStreamSource\\n# a comment\\ntopic = lines")
{'connector.class': 'FileStreamSource', 'topic': 'lines'}
>>> parse_config_body('{"connector.class": "FileStreamSource", "tasks.max": 1}')
{'connector.class': 'FileStreamSource', 'tasks.max': '1'}
"""

from __future__ import annotations

import argparse
import json
import shlex
from typing import Any, NoReturn

from IPython.core.error import UsageError

__all__ = ["COMMANDS", "HelpShown", "UsageError", "build_parser", "parse_command", "parse_config_body",
           "parse_many_configs", "parse_properties", "peek_converter", "selection"]

LINE_COMMANDS = ("start", "list", "status", "pause", "resume", "stop", "restart", "delete", "offsets",
                 "alter-offsets", "reset-offsets", "rewind", "topics", "explain", "metrics", "plugins", "board", "dashboard",
                 "topic-explorer", "versions", "rest", "peek", "schemas", "preview", "log", "close")
CELL_COMMANDS = ("create", "validate", "preview")  # preview: of a connector (line) or of the cell's config
COMMANDS = LINE_COMMANDS + tuple(c for c in CELL_COMMANDS if c not in LINE_COMMANDS)


class HelpShown(Exception):
    """``-h``/``--help`` was given: the help text was printed and nothing else should run."""


class _Parser(argparse.ArgumentParser):
    """An argparse parser that raises :class:`UsageError` instead of exiting the kernel."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}\n{self.format_usage().strip()}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if status:
            raise UsageError(message or f"{self.prog}: error")
        raise HelpShown()


def build_parser() -> argparse.ArgumentParser:
    """The parser of every ``%connect`` / ``%%connect`` subcommand."""
    p = _Parser(prog="%connect", description="Run Kafka Connect connectors in this kernel.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def add(name: str, help_: str, *, named: bool = False, output: bool = False) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_, description=help_.replace("%%", "%"))  # help is %-formatted
        if named:
            sp.add_argument("name", metavar="NAME", help="the connector's name")
        if output:
            sp.add_argument("-o", "--output", metavar="VAR", help="also store the result in variable VAR")
        return sp

    s = add("start", "start a Connect runtime in this kernel", output=True)
    s.add_argument("--bootstrap-servers", metavar="B", help="Kafka bootstrap servers (default: "
                   "ConnectMagics.bootstrap_servers)")
    s.add_argument("--group-id", metavar="G", help="worker group id (default: ConnectMagics.group_id)")
    s.add_argument("--config", metavar="FILE", help="a Kafka Connect worker.properties file (its bootstrap.servers "
                   "and group.id apply unless given; its settings over ConnectMagics.worker_config)")
    s.add_argument("--embedded", action="store_true", help="start an embedded Apache Kafka broker and use it")
    s.add_argument("--schema-registry", action="store_true", help="also start a local Schema Registry (Apicurio "
                   "Registry in memory, Confluent's API; about 160 MB downloaded on first use) and print its URL")
    s.add_argument("--spark", action="store_true", help="run tasks as Spark jobs on the active SparkSession's "
                   "executors (default: ConnectMagics.executor)")
    s.add_argument("--remote", metavar="URL", help="manage the Kafka Connect cluster whose REST API is at URL "
                   "(credentials: $CONNECT_REST_TOKEN, or $CONNECT_REST_USER and $CONNECT_REST_PASSWORD)")
    add("list", "connectors with their states (a DataFrame)", output=True)
    add("status", "a connector's and its tasks' states (a DataFrame)", named=True, output=True)
    def many(sp: argparse.ArgumentParser, verb: str) -> argparse.ArgumentParser:
        """NAME, or --all / --pattern REGEX for many connectors at once."""
        sp.add_argument("name", metavar="NAME", nargs="?", help="the connector's name")
        sp.add_argument("--all", action="store_true", help=f"{verb} every connector")
        sp.add_argument("--pattern", metavar="REGEX", help=f"{verb} every connector whose whole name matches this "
                        "Python regular expression")
        sp.add_argument("-o", "--output", metavar="VAR", help="also store the names acted on in variable VAR")
        return sp

    for verb in ("pause", "resume", "stop", "delete"):
        many(add(verb, f"{verb} a connector, or many (--all, --pattern)"), verb)
    r = many(add("restart", "restart a connector (and optionally its tasks), or many (--all, --pattern)"), "restart")
    r.add_argument("--include-tasks", action="store_true", help="restart the tasks too")
    r.add_argument("--only-failed", action="store_true", help="restart only failed instances")
    o = add("offsets", "a connector's offsets (a DataFrame; --edit: an OffsetsEditor widget)", named=True,
            output=True)
    o.add_argument("--edit", action="store_true", help="edit them in a widget with Apply and Reset buttons")
    a = add("alter-offsets", "alter a stopped connector's offsets to the rows of a DataFrame variable",
            named=True)
    a.add_argument("frame", metavar="VAR", help="a pandas or Spark DataFrame (as %%connect offsets gives)")
    add("reset-offsets", "reset a stopped connector's offsets", named=True)
    w = add("rewind", "rewind a sink connector to a time, or by a duration (stop, alter, resume done for you)",
            named=True, output=True)
    when = w.add_mutually_exclusive_group(required=True)
    when.add_argument("--to", metavar="TIME", help="ISO 8601 time, e.g. 2026-11-26T10:00:00Z (no zone: local "
                      "time) or epoch milliseconds")
    when.add_argument("--by", metavar="DURATION", help="how far back from now, e.g. 15m, 2h, PT1H")
    when.add_argument("--undo", action="store_true", help="put back the offsets the last rewind replaced")
    w.add_argument("--dry-run", action="store_true", help="only show the offsets; change nothing")
    add("topics", "the topics a connector has used", named=True, output=True)
    e = add("explain", "which topic creation group each topic matches, and its settings (a DataFrame)",
            named=True, output=True)
    e.add_argument("topics", metavar="TOPIC", nargs="*", help="topics to explain (default: the broker's topics)")
    m = add("metrics", "records read, written and per second, batch times and commits of every task (a DataFrame)",
            output=True)
    m.add_argument("name", metavar="NAME", nargs="?", help="only this connector's tasks")
    pk = add("peek", "the first records of a topic, decoded by converters (a Spark DataFrame; shown as pandas)",
             output=True)
    pk.add_argument("topic", metavar="TOPIC", help="the topic to read")
    pk.add_argument("-n", "--records", type=_non_negative, default=20, metavar="N",
                    help="read at most N records, the earliest of every partition in turn (default 20)")
    pk.add_argument("--converter", metavar="NAME", help="key and value converter (default: the worker's)")
    pk.add_argument("--key-converter", metavar="NAME", help="key converter (default: --converter's)")
    pk.add_argument("--property", metavar="KEY=VALUE", action="append", default=[], type=_property,
                    help="a converter property for both converters, e.g. schemas.enable=false (repeatable)")
    sc = add("schemas", "the Schema Registry's subjects, or one subject's versions and schemas (a DataFrame)",
             output=True)
    sc.add_argument("subject", metavar="SUBJECT", nargs="?", help="list this subject's versions")
    sc.add_argument("--url", help="the registry (default: --schema-registry's, else the worker's "
                                  "value.converter.schema.registry.url)")
    rs = add("rest", "serve Kafka Connect's REST API for this runtime (for tools, not for widgets)")
    rs.add_argument("--port", type=int, default=8083, help="the port on 127.0.0.1 (default 8083; 0: a free one)")
    rs.add_argument("--stop", action="store_true", help="stop the REST server")
    pl = add("plugins", "installed connector plugins (a DataFrame)", output=True)
    pl.add_argument("--all", action="store_true", help="also list transformations, predicates and converters")
    add("board", "a StatusBoard widget: states with refresh and pause/resume/stop buttons", output=True)
    d = add("dashboard", "a LiveDashboard widget: states, versions, topics, lag and throughput plots, refreshed "
            "in the background", output=True)
    d.add_argument("--interval", type=float, default=2.0, help="seconds between refreshes (default 2)")
    te = add("topic-explorer", "a TopicCreationExplorer widget: try topic.creation.* settings on topic names",
             named=True, output=True)
    te.add_argument("topics", metavar="TOPIC", nargs="*", help="candidate topic names")
    add("versions", "a PluginVersionPicker widget: choose the connector's plugin versions with a Maven range",
        named=True, output=True)
    lg = add("log", "the last lines of this kernel's connect_magics log file (background threads log there)")
    lg.add_argument("-n", "--lines", metavar="N", type=_positive, default=40, help="how many lines (default 40)")
    add("close", "stop the runtime (and the embedded broker and Schema Registry, if it started them)")
    c = add("create", "%%%%connect create NAME: create a connector from the cell's config; %%%%connect create --many: "
            "create every connector of the cell's JSON or YAML mapping of names to configs, all or none")
    c.add_argument("name", metavar="NAME", nargs="?", help="the connector's name (not with --many)")
    c.add_argument("--many", action="store_true", help="the cell maps connector names to configs (JSON or YAML)")
    c.add_argument("--initial-state", metavar="STATE", choices=("RUNNING", "PAUSED", "STOPPED"),
                   type=str.upper, help="RUNNING (default), PAUSED or STOPPED")
    v = add("validate", "%%%%connect validate [NAME]: validate the cell's config and show its errors", output=True)
    v.add_argument("name", metavar="NAME", nargs="?", help="the connector's name (sets the 'name' config)")
    pv = add("preview", "what a connector's converters and transformations do to a few records, writing nothing "
             "(in a cell: of the cell's config)", output=True)
    pv.add_argument("name", metavar="NAME", nargs="?", help="the connector (with a cell: the name the config gets)")
    pv.add_argument("-n", "--records", metavar="N", type=_positive, default=10, help="how many records (default 10)")
    pv.add_argument("--from", dest="position", choices=("earliest", "latest", "committed"), default="earliest",
                    help="a sink's records: each partition's first (default), its last, or from the connector's "
                    "committed offsets")
    return p


def _non_negative(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, not {text!r}")
    return int(text)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, not {text!r}")
    return int(text)


def _property(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def peek_converter(args: argparse.Namespace) -> dict[str, str] | None:
    """The connector-style converter config ``%connect peek`` gives ``rt.read_topic`` (None: the worker's).

    >>> peek_converter(parse_command("peek t --converter JsonConverter --property schemas.enable=false"))
    {'key.converter': 'JsonConverter', 'value.converter': 'JsonConverter', 'key.converter.schemas.enable': 'false', 'value.converter.schemas.enable': 'false'}
    """
    names = {"key.converter": args.key_converter or args.converter, "value.converter": args.converter}
    config = {k: v for k, v in names.items() if v}
    if not config and args.property:
        raise UsageError("%connect peek: --property needs --converter (the worker's converters keep their own "
                         "configuration)")
    for key, value in args.property:
        config.update({f"{k}.{key}": value for k in config})
    return config or None


_PARSER = build_parser()


def parse_command(line: str, cell: str | None = None) -> argparse.Namespace:
    """Parse a magic line. Cell-only commands need a cell, line-only commands refuse one.

    >>> parse_command("status lines -o st")
    Namespace(command='status', name='lines', output='st')
    """
    try:
        argv = shlex.split(line, comments=True)  # a comment after the command, as in any code cell
    except ValueError as e:
        raise UsageError(f"%connect: cannot parse the arguments {line!r}: {e}") from None
    if not argv:
        raise UsageError(f"%connect: a command is required, one of: {', '.join(COMMANDS)}")
    args = _PARSER.parse_args(argv)
    var = getattr(args, "output", None)
    if var is not None and not var.isidentifier():  # before anything runs: a failed command changes nothing
        raise UsageError(f"-o {var}: not a valid Python variable name")
    if cell is None and args.command in CELL_COMMANDS and args.command not in LINE_COMMANDS:
        raise UsageError(f"%connect {args.command} needs a cell body: use %%connect {args.command} ... with the "
                         "connector config in the cell")
    if cell is not None and args.command not in CELL_COMMANDS:
        raise UsageError(f"%%connect {args.command} takes no cell body: use the line magic %connect {args.command}, "
                         f"or one of the cell commands {', '.join(CELL_COMMANDS)}")
    if args.command == "preview" and cell is None and args.name is None:
        raise UsageError("%connect preview needs a connector NAME (or use %%connect preview with a config in the cell)")
    if args.command == "create" and args.many == (args.name is not None):
        raise UsageError("%%connect create takes a connector NAME, or --many (the cell then names the connectors), "
                         "not both" if args.many else "%%connect create needs a connector NAME (or --many)")
    if hasattr(args, "pattern"):
        given = sum((args.name is not None, args.all, args.pattern is not None))
        if given != 1:
            raise UsageError(f"%connect {args.command} takes one of NAME, --all or --pattern REGEX"
                             + ("" if given else ": none was given"))
    return args


def selection(args: argparse.Namespace) -> str | None:
    """What a lifecycle command acts on: None for the one connector NAME, else the regular expression of
    ``--all`` (``.*``) or ``--pattern``.

    >>> selection(parse_command("stop --all")), selection(parse_command("stop --pattern 'orders-.*'"))
    ('.*', 'orders-.*')
    >>> selection(parse_command("stop lines")) is None
    True
    """
    if args.all:
        return ".*"
    return args.pattern


def parse_many_configs(body: str) -> dict[str, dict[str, str]]:
    """The connectors of a ``%%connect create --many`` cell: a JSON or YAML mapping of names to configs (each a
    mapping of keys to strings, numbers or booleans; a REST body ``{"name": ..., "config": {...}}`` works too),
    or a JSON list of REST bodies.

    >>> parse_many_configs('{"a": {"connector.class": "FileStreamSource", "tasks.max": 1}}')
    {'a': {'connector.class': 'FileStreamSource', 'tasks.max': '1'}}
    >>> parse_many_configs("b:\\n  connector.class: FileStreamSink\\n  topics: lines\\n")
    {'b': {'connector.class': 'FileStreamSink', 'topics': 'lines'}}
    """
    if not body or not body.strip():
        raise UsageError("The cell is empty: put a JSON or YAML mapping of connector names to configs in it")
    try:
        data = json.loads(body)
    except json.JSONDecodeError as e:
        if body.lstrip().startswith(("{", "[")):
            raise UsageError(f"The connectors' JSON is invalid: {e.msg} at line {e.lineno} column {e.colno}") from None
        data = _yaml(body)
    if isinstance(data, list):
        pairs = []
        for i, item in enumerate(data):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise UsageError(f"Connector {i} of the list must be an object with a 'name' and its 'config'")
            pairs.append((item["name"], item.get("config", {k: v for k, v in item.items() if k != "name"})))
    elif isinstance(data, dict):
        pairs = list(data.items())
    else:
        raise UsageError(f"The cell must map connector names to configs, not be a {type(data).__name__}")
    if not pairs:
        raise UsageError("The cell names no connector")
    out: dict[str, dict[str, str]] = {}
    for name, config in pairs:
        name = str(name)
        if name in out:
            raise UsageError(f"Connector '{name}' is given twice")
        if isinstance(config, dict) and set(config) <= {"name", "config"} and isinstance(config.get("config"), dict):
            config = config["config"]
        if not isinstance(config, dict):
            raise UsageError(f"Connector '{name}': the config must be a mapping of keys to values, not "
                             f"{type(config).__name__}")
        try:
            out[name] = {str(k): _json_value(str(k), v) for k, v in config.items()}
        except UsageError as e:
            raise UsageError(f"Connector '{name}': {e}") from None
    return out


def _yaml(body: str) -> Any:
    try:
        import yaml
    except ImportError:
        raise UsageError("The cell is not JSON, and YAML needs PyYAML (pip install pyyaml)") from None
    try:
        return yaml.safe_load(body)
    except yaml.YAMLError as e:
        raise UsageError(f"The connectors' YAML is invalid: {e}") from None


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(text: str, lineno: int) -> str:
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch != "\\" or i + 1 >= len(text):
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "u":
            code = text[i + 2:i + 6]
            if len(code) != 4 or any(c not in "0123456789abcdefABCDEF" for c in code):
                raise UsageError(f"Config line {lineno}: malformed \\uxxxx escape {text[i:i + 6]!r}")
            out.append(chr(int(code, 16)))
            i += 6
            continue
        out.append(_ESCAPES.get(nxt, nxt))
        i += 2
    return "".join(out)


def _logical_lines(body: str) -> list[tuple[int, str]]:
    """Java properties logical lines (continuations joined), skipping blanks and comments."""
    lines, buf, start = [], "", 0
    for n, raw in enumerate(body.splitlines(), 1):
        text = raw.lstrip() if buf else raw.strip()
        if not buf:
            if not text or text[0] in "#!":
                continue
            start = n
        # a line continues when it ends in an odd number of backslashes
        trailing = len(text) - len(text.rstrip("\\"))
        if trailing % 2:
            buf += text[:-1]
            continue
        lines.append((start, buf + text))
        buf = ""
    if buf:
        lines.append((start, buf))
    return lines


def parse_properties(body: str) -> dict[str, str]:
    """Parse Java properties text: ``key=value`` or ``key: value`` lines, ``#``/``!`` comments, backslash
    continuations and escapes. A line without a separator or a key given twice is an error (Java would
    accept both silently).

    >>> parse_properties("a=1\\nb : two\\\\\\n  words\\n! note")
    {'a': '1', 'b': 'twowords'}
    """
    out: dict[str, str] = {}
    where: dict[str, int] = {}
    for lineno, line in _logical_lines(body):
        i, sep = 0, -1
        while i < len(line):
            if line[i] == "\\":
                i += 2
                continue
            if line[i] in "=:":
                sep = i
                break
            i += 1
        if sep < 0:
            raise UsageError(f"Config line {lineno}: expected key=value, got {line!r}")
        key = _unescape(line[:sep].strip(), lineno)
        value = _unescape(line[sep + 1:].lstrip(), lineno)
        if not key:
            raise UsageError(f"Config line {lineno}: the key is empty in {line!r}")
        if key in out:
            raise UsageError(f"Config line {lineno}: key '{key}' is given twice (first on line {where[key]})")
        out[key], where[key] = value, lineno
    return out


def _json_value(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return json.dumps(value)
    kind = "null" if value is None else type(value).__name__
    raise UsageError(f"Config key '{key}': the value must be a string, number or boolean, not {kind}")


def parse_json_config(body: str, name: str | None = None) -> dict[str, str]:
    """Parse a JSON object of config keys, or a REST create body ``{"name": ..., "config": {...}}``."""
    try:
        data = json.loads(body)
    except json.JSONDecodeError as e:
        raise UsageError(f"Config JSON is invalid: {e.msg} at line {e.lineno} column {e.colno}") from None
    if not isinstance(data, dict):
        raise UsageError(f"Config JSON must be an object of config keys, not {type(data).__name__}")
    if set(data) <= {"name", "config"} and isinstance(data.get("config"), dict):
        if name is not None and "name" in data and data["name"] != name:
            raise UsageError(f"Config JSON names connector '{data['name']}' but the command names '{name}'")
        data = data["config"]
    return {str(k): _json_value(str(k), v) for k, v in data.items()}


def parse_config_body(body: str, name: str | None = None) -> dict[str, str]:
    """A connector config from a cell body: JSON when it starts with ``{``, else Java properties.

    ``name`` (the connector named on the magic line) is checked against a REST-shaped JSON body.
    """
    if not body or not body.strip():
        raise UsageError("The cell is empty: put the connector config in it, as key=value lines or a JSON object")
    if body.lstrip().startswith("{"):
        return parse_json_config(body, name)
    return parse_properties(body)
