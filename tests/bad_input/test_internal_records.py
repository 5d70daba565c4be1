"""Malformed records written raw into each internal topic (config, offsets, status, task control): the
runtime skips each with a warning that names its key and what is wrong, keeps its view and its connectors as
they were, writes nothing in answer, and a new runtime on the same topics still starts."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bad_input.cases import SINK, SRC, Case, ids, of
from bad_input.kafka_state import SMALL_TOPICS, KafkaState, wait_for_stable_group
from confluent_kafka import Producer
from helpers import wait_until
from raw_topics import create_topics

from connect_magics import ConnectRuntime
from connect_magics.storage.task_control import TaskControlStore


class Setup:
    def __init__(self, rt: ConnectRuntime, control: TaskControlStore, bootstrap: str, group: str) -> None:
        self.rt, self.control, self.bootstrap, self.group = rt, control, bootstrap, group
        self.state = KafkaState(rt)
        wc = rt.worker_config
        self.topics = {"config": wc["config.storage.topic"], "offsets": wc["offset.storage.topic"],
                       "status": wc["status.storage.topic"], "task-control": control.topic}
        self.stores = {"config": [rt.config_store], "offsets": [rt.offset_store], "status": [rt.status_store],
                       "task-control": [control, rt.requests]}  # the topic's two readers

    def view(self) -> dict[str, Any]:
        """Everything the runtime answers about its connectors, and the task control store's values."""
        rt = self.rt
        return {name: {"config": rt.connector_config(name), "tasks": rt.task_configs(name),
                       "target": rt.config_store.target_state(name), "status": rt.connector_status(name),
                       "offsets": rt.get_offsets(name), "topics": rt.connector_topics(name)}
                for name in rt.connectors()} | {"control": self.control.control("src-running", 0)}


@pytest.fixture(scope="module")
def setup(bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    group = f"bad-records-{uuid.uuid4().hex[:8]}"
    file = Path(tmp_path_factory.mktemp("bad-records")) / "in.txt"
    file.write_text("")
    create_topics(bootstrap, "bi-rec-in")
    configs = {"src-running": {**SRC, "file": str(file)}, "src-stopped": {**SRC, "file": str(file)},
               "sink-running": {**SINK, "file": str(file) + ".out", "topics": "bi-rec-in",
                                "consumer.override.group.id": f"{group}-sink"}}  # not another module's group
    with ConnectRuntime(bootstrap, group, SMALL_TOPICS) as rt:
        for name, config in configs.items():
            rt.create_connector(name, config, "STOPPED" if name == "src-stopped" else None)
        wait_until(lambda: all(rt.connector_status(n)["connector"]["state"] in ("RUNNING", "STOPPED")
                               and all(t["state"] == "RUNNING" for t in rt.connector_status(n)["tasks"])
                               for n in configs) and len(rt.connector_status("sink-running")["tasks"]) == 1,
                   message="the connectors running")
        wait_for_stable_group(rt, f"{group}-sink")
        control = TaskControlStore(rt.worker_config["task.control.storage.topic"],
                                   rt.worker_config.client_config()).start()
        control.put_control("src-running", 0, 1, "STARTED")
        s = Setup(rt, control, bootstrap, group)
        try:
            yield s
        finally:
            control.stop()
            s.state.close()


@pytest.mark.parametrize("case", of("record"), ids=ids(of("record")))
def test_malformed_record_is_skipped(case: Case, setup: Setup, caplog: pytest.LogCaptureFixture) -> None:
    kind, key, value = case.input
    view, before = setup.view(), setup.state.snapshot()
    caplog.set_level(logging.WARNING, logger="connect_magics")
    producer = Producer({"bootstrap.servers": setup.bootstrap})
    producer.produce(setup.topics[kind], value=value, key=key)
    assert producer.flush(10) == 0
    for store in setup.stores[kind]:
        store.log.read_to_end(10)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any(all(f in w for f in case.expect) for w in warnings), f"{case.id}: no warning with {case.expect} " \
                                                                    f"in {warnings}"
    assert setup.view() == view, "the runtime's view did not change"
    assert setup.rt.connector_status("src-running")["tasks"][0]["state"] == "RUNNING"
    after = setup.state.snapshot()
    before["ends"][(setup.topics[kind], 0)] += 1  # the malformed record itself is the only new one
    assert after == before, "the runtime wrote nothing in answer"


def test_a_new_runtime_reads_past_the_malformed_records(setup: Setup, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="connect_magics")
    setup.rt.stop_connector("sink-running")  # so that the new runtime's sink does not rebalance with this one
    expected = {n: setup.rt.connector_config(n) for n in setup.rt.connectors()}
    with ConnectRuntime(setup.bootstrap, setup.group, SMALL_TOPICS) as again:
        assert {n: again.connector_config(n) for n in again.connectors()} == expected
        for name in ("src-stopped", "sink-running"):
            assert again.config_store.target_state(name).value == "STOPPED"
            assert again.connector_status(name)["connector"]["state"] == "STOPPED"
    assert any("Skipping the record of" in r.getMessage() for r in caplog.records)
