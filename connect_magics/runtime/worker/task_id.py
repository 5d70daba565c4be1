"""A task's name: its connector and its number (Kafka Connect's ``ConnectorTaskId``).

>>> str(TaskId("lines", 2))
'lines-2'
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class TaskId:
    connector: str
    task: int

    def __str__(self) -> str:
        return f"{self.connector}-{self.task}"
