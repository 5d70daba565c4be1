"""What both Spark table connectors share: their settings checked, and the table's directory resolved once.

The directory is resolved on the kernel (where ``warehouse.dir`` is relative to the working directory) and
handed to the tasks as an absolute ``path``: tasks may run in a Spark executor, elsewhere.

Example::

    >>> from connect_magics.connectors.spark_table import SparkTableSinkConnector
    >>> c = SparkTableSinkConnector()
    >>> c.start({"topics": "t", "table": "events", "warehouse.dir": "/wh"})
    >>> c.task_configs(1)[0]["path"]
    '/wh/events'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from connect_magics.api.config import ConfigDef, ConfigValue
from connect_magics.connectors.file import _plugin_version
from connect_magics.connectors.spark_table import settings

__all__ = ["TableConnector"]


class TableConnector:
    """A mixin before :class:`~connect_magics.api.SinkConnector` or ``SourceConnector``: ``definition`` and
    ``problems`` (static) give the connector's settings and the checks across them."""

    definition: Callable[[], ConfigDef]
    problems: Callable[[Mapping[str, Any]], list[tuple[str, Any, str]]]

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return _plugin_version()

    def config_def(self) -> ConfigDef:
        return self.definition()

    @classmethod
    def parse(cls, props: Mapping[str, Any]) -> dict[str, Any]:
        """The parsed settings; :class:`~connect_magics.api.ConfigException` names the first bad one."""
        return settings.parse_checked(cls.definition(), cls.problems, props)

    def validate(self, connector_configs: dict[str, str]) -> list[ConfigValue]:
        """Kafka's per-key validation, plus the checks across settings (the table's location, columns)."""
        return settings.add_problems(super().validate(connector_configs), self.problems)  # type: ignore[misc]

    def start(self, props: dict[str, str]) -> None:
        parsed = self.parse(props)
        self._props = {k: v for k, v in props.items() if k != settings.TABLE_CONFIG}
        self._props[settings.PATH_CONFIG] = settings.table_location(parsed)

    def stop(self) -> None:
        """Nothing to do: the connector does no background work."""
