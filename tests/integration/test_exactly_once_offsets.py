"""An exactly-once source's transaction carries the offsets of every record in it (runtime/worker/
exactly_once_source.py): also when the broker froze after the records were sent, the commit's flush timed out
and the commit then completed. Found by the 30 s outage test: 2,000 duplicates, one batch committed with the
offsets of the batch before it and polled again after the task started over."""

from __future__ import annotations

import threading
import time

from helpers import one_task_connector, wait_until
from raw_topics import create_topics, read_records

from connect_magics import ConnectRuntime
from connect_magics.api import SourceConnector, SourceRecord, SourceTask
from connect_magics.api.data import STRING_SCHEMA
from connect_magics.local import EmbeddedBroker

RECORDS = 100
FLUSH_TIMEOUT_S = 1.0
RELEASE = threading.Event()  # the test lets the task's one batch go
POLLED_AT: list[float] = []


class OneBatchTask(SourceTask):
    """Polls nothing until released, then one batch of RECORDS records (offsets 1..RECORDS), then nothing."""

    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        self.topic, self.sent = props["topic"], False

    def poll(self) -> list[SourceRecord] | None:
        if self.sent or not RELEASE.wait(0.1):
            return None
        self.sent = True
        POLLED_AT.append(time.monotonic())
        return [SourceRecord({"table": "t"}, {"n": n}, self.topic, value_schema=STRING_SCHEMA, value=str(n))
                for n in range(1, RECORDS + 1)]

    def stop(self) -> None:
        pass


OneBatchSource = one_task_connector("OneBatchSource", SourceConnector, OneBatchTask)


def test_a_commit_after_a_timed_out_flush_holds_every_record_s_offset(outage_broker: EmbeddedBroker,
                                                                       unique: str) -> None:
    bootstrap = outage_broker.bootstrap_servers
    topic = f"eos-offsets-{unique}"
    create_topics(bootstrap, topic)
    worker = {"exactly.once.source.support": "enabled", "offset.flush.interval.ms": "1000",
              "offset.flush.timeout.ms": str(int(FLUSH_TIMEOUT_S * 1000))}
    with ConnectRuntime(bootstrap, f"eos-offsets-{unique}", worker) as rt:
        rt.plugins.register(OneBatchSource)
        rt.create_connector("one", {"connector.class": "OneBatchSource", "topic": topic,
                                    "value.converter": "org.apache.kafka.connect.storage.StringConverter"})
        wait_until(lambda: rt.task_status("one", 0)["state"] == "RUNNING", 60, message="the task RUNNING")
        outage_broker.pause()  # frozen: the batch is sent, and not acknowledged until it resumes
        try:
            RELEASE.set()
            wait_until(lambda: POLLED_AT, 30, message="the batch polled")
            # The commit's flush waits FLUSH_TIMEOUT_S for acknowledgements that cannot come; the commit itself
            # waits for the broker. Frozen twice that long, the flush has surely timed out (were the broker
            # back sooner, the flush would succeed and the test pass without testing anything).
            wait_until(lambda: time.monotonic() > POLLED_AT[0] + 3 * FLUSH_TIMEOUT_S, 30, message="the outage")
        finally:
            outage_broker.resume()
        wait_until(lambda: len(read_records(bootstrap, topic)) == RECORDS, 60, message="the batch committed")

        def committed() -> list:
            return [o["offset"] for o in rt.get_offsets("one")["offsets"]]

        # before the fix: the transaction held no offset (none acknowledged at the flush), for ever
        assert wait_until(lambda: committed() == [{"n": RECORDS}], 60,
                          message=lambda: f"the last record's offset committed with it (got {committed()})")
