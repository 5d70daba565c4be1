"""IPython magics ``%connect`` and ``%%connect``: a thin layer over :class:`~connect_magics.ConnectRuntime`.

>>> %load_ext connect_magics  # doctest: +SKIP
>>> %connect start --embedded  # doctest: +SKIP
>>> %connect start --embedded --schema-registry  # doctest: +SKIP
>>> %connect status lines -o st  # doctest: +SKIP

Tables (statuses, plugins, offsets, validation errors) are pandas DataFrames, everything else plain text,
so the magics work where widgets cannot render (EMR). Every failure raises, so the cell ends as an error:
:class:`UsageError` for bad input, a :class:`ConnectMagicError` (a UsageError carrying the HTTP ``status``)
for the runtime's 4xx answers; 5xx :class:`~connect_magics.errors.ConnectRestError` propagate unchanged.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
from collections.abc import Callable
from typing import Any

import ipywidgets as W
import pandas as pd
from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from traitlets import Dict, Enum, Unicode

from connect_magics.api.config import ConfigException
from connect_magics.api.errors import ConnectException
from connect_magics.errors import ConnectRestError
from connect_magics.notebook.parsing import (
    HelpShown,
    parse_command,
    parse_config_body,
    parse_many_configs,
    peek_converter,
    selection,
)
from connect_magics.notebook.tables import (
    empty_offsets_reason,
    offsets_frame,
    status_frame,
    task_metrics_frame,
    tasks_summary,
)
from connect_magics.runtime.executors import EXECUTORS

log = logging.getLogger(__name__)

LIST_COLUMNS = ["connector", "type", "state", "tasks"]
NOTEBOOK_WORKER_DEFAULTS = {"offset.flush.interval.ms": "5000"}
WHERE_TASKS_RUN = {"threads": "kernel threads", "processes": "task processes", "spark": "Spark executors"}
"""Where Kafka Connect's worker defaults suit long-running clusters but not a notebook (docs/deviations.md):
offsets committed every 5 s instead of 60 s, so ``%connect offsets`` shows seconds-old positions."""
EXPLAIN_COLUMNS = ["topic", "group", "action", "partitions", "replication_factor", "configs", "reason"]


class ConnectMagicError(UsageError):
    """The runtime refused a request (a 4xx ConnectRestError): ``status`` and ``message`` as the REST API."""

    def __init__(self, error: ConnectRestError) -> None:
        super().__init__(f"{error.message} (HTTP {error.status})")
        self.status = error.status
        self.message = error.message


@magics_class
class ConnectMagics(Magics):
    """``%connect`` / ``%%connect``; configure with ``%config ConnectMagics.bootstrap_servers = "host:9092"``.

    ``runtime`` is the running :class:`~connect_magics.ConnectRuntime` (None before ``%connect start``);
    ``broker`` and ``schema_registry`` the embedded broker and local Schema Registry it started, if any.
    """

    bootstrap_servers = Unicode("", help="Kafka bootstrap servers used by %connect start").tag(config=True)
    group_id = Unicode("connect-magics", help="Connect worker group id used by %connect start").tag(config=True)
    worker_config = Dict(help="Kafka Connect worker properties for %connect start").tag(config=True)
    executor = Enum(EXECUTORS, "threads",
                    help="Where %connect start runs tasks: kernel threads, a process per task, or Spark jobs on "
                         "the executors of the active SparkSession (docs/spark.md)").tag(config=True)
    notebook_defaults = Dict(dict(NOTEBOOK_WORKER_DEFAULTS), help="Worker properties %connect start uses unless "
                             "worker_config sets them (notebook-friendly; {} for Kafka Connect's defaults)"
                             ).tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self.runtime: Any = None
        self.broker: Any = None
        self.schema_registry: Any = None
        self.rest_server: Any = None

    # -- entry point ----------------------------------------------------------------------------
    @line_cell_magic
    def connect(self, line: str, cell: str | None = None) -> Any:
        """Run Kafka Connect in this kernel. ``%connect -h`` lists the commands; ``%connect CMD -h`` explains one."""
        try:
            args = parse_command(line, cell)
        except HelpShown:
            return None
        handler: Callable[[argparse.Namespace, str | None], Any] = getattr(self,
                                                                        f"_cmd_{args.command.replace('-', '_')}")
        try:
            result = handler(args, cell)
        except ConnectRestError as e:
            if 400 <= e.status < 500:
                raise ConnectMagicError(e) from e
            raise
        var = getattr(args, "output", None)
        if var:  # checked by parse_command before the command ran
            self.shell.user_ns[var] = result
        if args.command == "peek":
            return result.toPandas()
        return result if isinstance(result, (pd.DataFrame, W.Widget)) else None

    @staticmethod
    def _worker_file(path: str) -> dict[str, str]:
        from connect_magics.runtime.config.properties import load_properties

        try:
            return load_properties(path)
        except OSError as e:
            raise UsageError(f"--config {path}: {e.strerror or e}") from None

    def _rt(self) -> Any:
        if self.runtime is None:
            raise UsageError("No Connect runtime in this kernel: run %connect start first")
        return self.runtime

    # -- commands -------------------------------------------------------------------------------
    def _cmd_start(self, args: argparse.Namespace, cell: str | None) -> Any:
        from connect_magics.runtime.runtime import ConnectRuntime

        if self.runtime is not None:
            raise UsageError("A Connect runtime is already running in this kernel: %connect close it first")
        if args.remote:
            return self._start_remote(args)
        props = self._worker_file(args.config) if args.config else {}
        group = args.group_id or props.pop("group.id", None) or self.group_id
        if not group.strip():
            raise UsageError("group_id must not be blank: pass --group-id or %config ConnectMagics.group_id")
        servers = args.bootstrap_servers or props.pop("bootstrap.servers", None) or self.bootstrap_servers
        if args.embedded and args.bootstrap_servers:
            raise UsageError("--embedded and --bootstrap-servers exclude each other: the embedded broker "
                             "chooses its own address")
        if not (args.embedded or servers.strip()):
            raise UsageError("bootstrap_servers is not set: pass --bootstrap-servers HOST:PORT, set "
                             "%config ConnectMagics.bootstrap_servers = 'HOST:PORT', or use --embedded")
        broker = registry = None
        say = lambda msg: print(msg, flush=True)  # noqa: E731 - progress of first downloads
        try:
            if args.embedded:
                from connect_magics.local import EmbeddedBroker

                broker = EmbeddedBroker(progress=say)
                broker.start()
                servers = broker.bootstrap_servers
            if args.schema_registry:
                from connect_magics.local import SchemaRegistry, SchemaRegistryError

                registry = SchemaRegistry(progress=say)
                try:
                    registry.start()
                except SchemaRegistryError as e:
                    raise UsageError(f"--schema-registry: {e}") from None
            executor = "spark" if args.spark else self.executor
            self.runtime = ConnectRuntime(servers, group, {**self.notebook_defaults, **self.worker_config, **props},
                                          executor=executor)
        except BaseException:
            for service in (registry, broker):
                if service is not None:
                    service.stop()
            raise
        self.broker, self.schema_registry = broker, registry
        where = "embedded broker " if broker is not None else ""
        print(f"Connect runtime started: group.id={group}, {where}bootstrap.servers={servers}, "
              f"tasks on {WHERE_TASKS_RUN[executor]}")
        from connect_magics.notebook.kernel_log import log_path

        if log_path() is not None:
            print(f"Its log: {log_path()} (%connect log shows the last lines)")
        if registry is not None:
            self.runtime.schema_registry_url = registry.url
            print(f"Schema Registry (Apicurio Registry {registry.version}, in memory, Confluent's API): "
                  f"schema.registry.url={registry.url}")
        return self.runtime

    def _start_remote(self, args: argparse.Namespace) -> Any:
        from connect_magics.remote import RemoteRuntime

        if args.embedded or args.group_id or args.schema_registry or args.config:
            raise UsageError("--remote excludes --embedded, --schema-registry, --config and --group-id: the remote "
                             "cluster has its own (--bootstrap-servers names its Kafka, for peek and the editor)")
        if not args.remote.startswith(("http://", "https://")):
            raise UsageError(f"--remote {args.remote}: expected the REST API's URL, http(s)://HOST:PORT")
        token = os.environ.get("CONNECT_REST_TOKEN")
        user, password = os.environ.get("CONNECT_REST_USER"), os.environ.get("CONNECT_REST_PASSWORD")
        auth: tuple[str, str] | str | None = token or ((user, password or "") if user else None)
        rt = RemoteRuntime(args.remote, auth=auth, bootstrap_servers=args.bootstrap_servers)
        rt.kafka_cluster_id()  # fails clearly now if the cluster cannot be reached or refuses us
        self.runtime = rt
        print(f"Managing the Kafka Connect cluster at {rt.url}")
        return rt

    def _cmd_close(self, args: argparse.Namespace, cell: str | None) -> None:
        if self.runtime is None and self.broker is None and self.schema_registry is None:
            print("No Connect runtime to close.")
            return
        self.close()
        print("Connect runtime closed.")

    def close(self) -> None:
        """Close the runtime and stop the embedded broker and Schema Registry, if this instance started them."""
        rt, broker, self.runtime, self.broker = self.runtime, self.broker, None, None
        registry, self.schema_registry = self.schema_registry, None
        server, self.rest_server = self.rest_server, None
        try:
            if server is not None:
                server.stop()
            if rt is not None:
                rt.close()
        finally:
            try:
                if registry is not None:
                    registry.stop()
            finally:
                if broker is not None:
                    broker.stop()

    def _cmd_list(self, args: argparse.Namespace, cell: str | None) -> pd.DataFrame:
        rt = self._rt()
        rows = []
        for name in sorted(rt.connectors()):
            try:
                st = rt.connector_status(name)
            except ConnectRestError:  # deleted meanwhile, or no status yet
                rows.append({"connector": name, "type": "", "state": "UNKNOWN", "tasks": ""})
                continue
            rows.append({"connector": name, "type": st.get("type", ""), "state": st["connector"]["state"],
                         "tasks": tasks_summary(st)})
        return pd.DataFrame(rows, columns=LIST_COLUMNS)

    def _cmd_status(self, args: argparse.Namespace, cell: str | None) -> pd.DataFrame:
        return status_frame(self._rt().connector_status(args.name))

    def _many(self, args: argparse.Namespace, verb: str, done: str) -> list[str] | None:
        """``--all`` / ``--pattern``: the bulk call ``{verb}_connectors`` and a line naming what it acted on (None
        for a single NAME)."""
        pattern = selection(args)
        if pattern is None:
            return None
        rt = self._rt()
        bulk = getattr(rt, f"{verb}_connectors", None)
        if bulk is None:  # a runtime without bulk calls (a remote cluster): one call per connector
            names = sorted(n for n in rt.connectors() if re.fullmatch(pattern, n))
            for name in names:
                getattr(rt, f"{verb}_connector")(name)
        else:
            names = bulk(pattern)
        if isinstance(names, dict):
            names = list(names)
        shown = ", ".join(names[:10]) + (f", ... ({len(names) - 10} more)" if len(names) > 10 else "")
        none = "There are no connectors" if args.all else f"No connector name matches {pattern!r}"
        print(f"{done.capitalize()} {len(names)} connector{'s' if len(names) != 1 else ''}: {shown}" if names
              else f"{none}: nothing to {verb}.")
        return names

    def _cmd_pause(self, args: argparse.Namespace, cell: str | None) -> list[str] | None:
        names = self._many(args, "pause", "paused")
        if names is None:
            self._rt().pause_connector(args.name)
            print(f"Connector '{args.name}' is pausing.")
        return names

    def _cmd_resume(self, args: argparse.Namespace, cell: str | None) -> list[str] | None:
        names = self._many(args, "resume", "resumed")
        if names is None:
            self._rt().resume_connector(args.name)
            print(f"Connector '{args.name}' is resuming.")
        return names

    def _cmd_stop(self, args: argparse.Namespace, cell: str | None) -> list[str] | None:
        names = self._many(args, "stop", "stopped")
        if names is None:
            self._rt().stop_connector(args.name)
            print(f"Connector '{args.name}' is stopping.")
        return names

    def _cmd_delete(self, args: argparse.Namespace, cell: str | None) -> list[str] | None:
        names = self._many(args, "delete", "deleted")
        if names is None:
            self._rt().delete_connector(args.name)
            print(f"Connector '{args.name}' deleted.")
        return names

    def _cmd_restart(self, args: argparse.Namespace, cell: str | None) -> Any:
        if args.name is None:
            rt, pattern = self._rt(), selection(args)
            if hasattr(rt, "restart_connectors"):
                plans = rt.restart_connectors(pattern, args.include_tasks, args.only_failed)
            else:  # a remote cluster: one call per connector
                plans = {n: rt.restart_connector(n, args.include_tasks, args.only_failed)
                         for n in sorted(rt.connectors()) if re.fullmatch(pattern, n)}
            print(f"Restarted {len(plans)} connector{'s' if len(plans) != 1 else ''}"
                  + (f": {', '.join(list(plans)[:10])}{', ...' if len(plans) > 10 else ''}" if plans else "."))
            return plans
        plan = self._rt().restart_connector(args.name, args.include_tasks, args.only_failed)
        if plan is None:
            print(f"Connector '{args.name}' restarted.")
        else:
            print(f"Connector '{args.name}' restarting: {tasks_summary(plan) or 'no tasks'} "
                  f"(connector {plan['connector']['state']}).")
        return plan

    def _cmd_offsets(self, args: argparse.Namespace, cell: str | None) -> Any:
        rt = self._rt()
        if args.edit:
            from connect_magics.notebook.offsets_editor import OffsetsEditor

            return OffsetsEditor(rt, args.name)
        frame = offsets_frame(rt, args.name)
        if frame.empty:
            print(empty_offsets_reason(rt, args.name))
        return frame

    def _cmd_alter_offsets(self, args: argparse.Namespace, cell: str | None) -> None:
        if args.frame not in self.shell.user_ns:
            raise UsageError(f"%connect alter-offsets: no variable named {args.frame!r} in the notebook")
        print(self._rt().alter_offsets_from_frame(args.name, self.shell.user_ns[args.frame])["message"])

    def _cmd_reset_offsets(self, args: argparse.Namespace, cell: str | None) -> None:
        print(self._rt().reset_offsets(args.name)["message"])

    def _cmd_rewind(self, args: argparse.Namespace, cell: str | None) -> pd.DataFrame:
        rt = self._rt()
        if args.undo:
            if args.dry_run:
                raise UsageError("%connect rewind: --dry-run shows a rewind's plan; --undo has none to show")
            frame = rt.undo_rewind(args.name)
            print(f"Connector '{args.name}': the offsets before its last rewind are back.")
            return frame
        to = int(args.to) if args.to is not None and args.to.isdigit() else args.to
        frame = rt.rewind(args.name, to=to, by=args.by, apply=not args.dry_run)
        when = frame.attrs["rewind_to"]
        print(f"Connector '{args.name}': offsets for {when} (nothing changed: --dry-run)." if args.dry_run else
              f"Connector '{args.name}' rewound to {when}; `%connect rewind {args.name} --undo` takes it back.")
        return frame

    def _cmd_explain(self, args: argparse.Namespace, cell: str | None) -> pd.DataFrame:
        answer = self._rt().explain_topic_creation(args.name, args.topics or None, include_existing=not args.topics)
        if not answer["enabled"]:
            print(f"Topic creation is off for {args.name}: {answer['reason']}")
        return pd.DataFrame([{k: t.get(k) for k in EXPLAIN_COLUMNS} for t in answer["topics"]],
                            columns=EXPLAIN_COLUMNS)

    def _cmd_metrics(self, args: argparse.Namespace, cell: str | None) -> pd.DataFrame:
        rt = self._rt()
        if args.name is not None:
            rt.connector_status(args.name)  # an unknown connector is an error, not an empty table
        return task_metrics_frame(rt.metrics(), args.name)

    def _cmd_peek(self, args: argparse.Namespace, cell: str | None) -> Any:
        return self._rt().read_topic(args.topic, peek_converter(args), max_records=args.records)

    def _cmd_schemas(self, args: argparse.Namespace, cell: str | None) -> Any:
        rt = self._rt()
        if not hasattr(rt, "schemas"):
            raise UsageError("%connect schemas needs a runtime in this kernel (not --remote)")
        try:
            return rt.schemas(args.subject, args.url)
        except (ConnectException, ConfigException) as e:
            raise UsageError(f"%connect schemas: {e}") from None

    def _cmd_rest(self, args: argparse.Namespace, cell: str | None) -> None:
        from connect_magics.rest import RestServer

        if args.stop:
            if self.rest_server is None:
                print("No REST server to stop.")
                return
            self.rest_server.stop()
            self.rest_server = None
            print("REST server stopped.")
            return
        rt = self._rt()
        if not hasattr(rt, "herder"):
            raise UsageError(f"%connect rest serves a runtime of this kernel; the cluster at {rt.url} serves its own "
                             "REST API there")
        if self.rest_server is not None:
            raise UsageError(f"A REST server is already running at {self.rest_server.url}: %connect rest --stop it first")
        try:
            self.rest_server = RestServer(rt, port=args.port).start()
        except OSError as e:
            raise UsageError(f"%connect rest: cannot listen on port {args.port}: {e.strerror}") from None
        print(f"Kafka Connect REST API at {self.rest_server.url}")

    def _cmd_topics(self, args: argparse.Namespace, cell: str | None) -> list[str]:
        topics = self._rt().connector_topics(args.name)[args.name]["topics"]
        print(f"{args.name}: {', '.join(topics)}" if topics else f"{args.name}: no topics")
        return topics

    def _cmd_plugins(self, args: argparse.Namespace, cell: str | None) -> pd.DataFrame:
        return pd.DataFrame(self._rt().connector_plugins(not args.all), columns=["class", "type", "version"])

    def _cmd_board(self, args: argparse.Namespace, cell: str | None) -> Any:
        from connect_magics.notebook.widgets import StatusBoard

        return StatusBoard(self._rt())

    def _cmd_dashboard(self, args: argparse.Namespace, cell: str | None) -> Any:
        from connect_magics.notebook.dashboard import LiveDashboard

        if args.interval <= 0:
            raise UsageError(f"--interval {args.interval:g}: must be more than 0 seconds")
        return LiveDashboard(self._rt(), interval=args.interval)

    def _cmd_topic_explorer(self, args: argparse.Namespace, cell: str | None) -> Any:
        from connect_magics.notebook.topic_explorer import TopicCreationExplorer

        return TopicCreationExplorer(self._rt(), args.name, args.topics)

    def _cmd_versions(self, args: argparse.Namespace, cell: str | None) -> Any:
        from connect_magics.notebook.version_picker import PluginVersionPicker

        return PluginVersionPicker(self._rt(), args.name)

    def _cmd_create(self, args: argparse.Namespace, cell: str | None) -> dict | list[dict]:
        if args.many:
            configs = parse_many_configs(cell or "")
            rt = self._rt()
            if hasattr(rt, "create_connectors"):
                infos = rt.create_connectors(configs, args.initial_state)
            else:  # a remote cluster: one call per connector
                infos = [rt.create_connector(name, config, args.initial_state) for name, config in configs.items()]
            tasks = sum(len(info.get("tasks", [])) for info in infos)
            print(f"Created {len(infos)} connector{'s' if len(infos) != 1 else ''} with {tasks} "
                  f"task{'s' if tasks != 1 else ''}.")
            return infos
        config = parse_config_body(cell or "", args.name)
        info = self._rt().create_connector(args.name, config, args.initial_state)
        n = len(info.get("tasks", []))
        print(f"Created {info.get('type', '')} connector '{args.name}' with {n} task{'s' if n != 1 else ''}.")
        return info

    def _cmd_log(self, args: argparse.Namespace, cell: str | None) -> None:
        from connect_magics.notebook.kernel_log import log_path, tail

        path = log_path()
        if path is None:
            print("The connect_magics logger writes to handlers of your own, not to a file of this extension.")
            return
        print(f"{path} (last {args.lines} lines):\n{tail(args.lines)}", end="")

    def _cmd_preview(self, args: argparse.Namespace, cell: str | None) -> Any:
        rt = self._rt()
        if cell is None:
            result = rt.preview(args.name, records=args.records, position=args.position)
        else:
            config = parse_config_body(cell, args.name)
            result = rt.preview(config, name=args.name, records=args.records, position=args.position)
        from IPython.display import display

        display(result)
        return result

    def _cmd_validate(self, args: argparse.Namespace, cell: str | None) -> pd.DataFrame:
        config = parse_config_body(cell or "", args.name)
        if args.name:
            config.setdefault("name", args.name)
        infos = self._rt().validate_connector_config(config)
        rows = [{"config": c["value"]["name"], "value": c["value"].get("value"), "error": err}
                for c in infos.get("configs", []) for err in c["value"].get("errors", [])]
        frame = pd.DataFrame(rows, columns=["config", "value", "error"])
        if frame.empty:
            print(f"The config is valid ({infos.get('name', '')}: 0 errors).")
        return frame


def load_ipython_extension(ip: Any) -> ConnectMagics:
    """``%load_ext connect_magics``: register ``%connect``/``%%connect`` and make them ``%config``-urable."""
    existing = getattr(ip, "_connect_magics", None)
    if existing is not None:
        return existing
    from connect_magics.notebook.kernel_log import install

    install()  # background threads' log lines go to a file, not into whichever cell runs next
    magics = ConnectMagics(shell=ip)
    ip.register_magics(magics)
    ip.configurables.append(magics)
    ip._connect_magics = magics
    return magics


def unload_ipython_extension(ip: Any) -> None:
    """``%unload_ext connect_magics``: close the runtime (and embedded broker) and remove the magics."""
    magics = getattr(ip, "_connect_magics", None)
    if magics is None:
        return
    try:
        magics.close()
    finally:
        from connect_magics.notebook.kernel_log import uninstall

        uninstall()
        for kind in ("line", "cell"):
            ip.magics_manager.magics[kind].pop("connect", None)
        if magics in ip.configurables:
            ip.configurables.remove(magics)
        ip._connect_magics = None
