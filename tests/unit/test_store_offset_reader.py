"""StoreOffsetReader: a fenced task's first read waits for its claim (the predecessor's last commit is then
readable); later reads do not wait again; the stores are read to their end before every read."""

from typing import Any

from connect_magics.runtime.worker.source_runner import StoreOffsetReader
from connect_magics.storage.offset_store import freeze


class Store:
    """Stands in for an OffsetStore: counts its reads to the end and answers from a dict."""

    def __init__(self, events: list[str], offsets: dict[str, dict], open_transaction: bool = False) -> None:
        self.events, self.offsets, self.open_transaction = events, offsets, open_transaction

    def read_to_end(self, past_open_transactions: bool = False) -> None:
        if past_open_transactions and self.open_transaction:
            raise TimeoutError("Timed out reading topic offsets to its end")
        self.events.append("read_to_end" if past_open_transactions else "read_to_stable_end")

    def get(self, connector: str, partitions: list[dict[str, Any]]) -> dict[Any, dict]:
        return {freeze(p): self.offsets[p["file"]] for p in partitions if p["file"] in self.offsets}


def test_the_first_read_waits_for_the_claim_and_later_reads_do_not() -> None:
    events: list[str] = []
    reader = StoreOffsetReader("c", [Store(events, {"a": {"position": 7}})],  # type: ignore[list-item]
                               lambda: events.append("claimed"))
    assert reader.offset({"file": "a"}) == {"position": 7}
    assert reader.offset({"file": "b"}) is None
    assert events == ["claimed", "read_to_end", "read_to_end"]


def test_later_stores_override_earlier_ones_and_without_a_fence_nothing_is_awaited() -> None:
    events: list[str] = []
    stores = [Store(events, {"a": {"position": 1}, "b": {"position": 2}}), Store(events, {"a": {"position": 3}})]
    reader = StoreOffsetReader("c", stores)  # type: ignore[arg-type]
    assert reader.offsets([{"file": "a"}, {"file": "b"}]) == {freeze({"file": "a"}): {"position": 3},
                                                               freeze({"file": "b"}): {"position": 2}}
    assert events == ["read_to_end", "read_to_end"]


def test_a_transaction_that_stays_open_falls_back_to_the_stable_end(caplog) -> None:
    """An at-least-once task whose read past open transactions timed out reads what is committed before them (records
    after those offsets may be sent again) instead of failing."""
    events: list[str] = []
    reader = StoreOffsetReader("c", [Store(events, {"a": {"position": 5}}, open_transaction=True)])  # type: ignore[list-item]
    assert reader.offset({"file": "a"}) == {"position": 5}
    assert events == ["read_to_stable_end"]
    assert "up to the last stable offsets instead; records after them may be sent again" in caplog.text
