"""A right to write, held by a transactional producer: the one fencing mechanism of connect_magics.

Whoever claims a :class:`ProducerFence` initialises a transactional producer with its id; the broker
then refuses every transaction of earlier producers with that id (``PRODUCER_FENCED``). Task instances
(runtime/worker/fencing.py: ``{group.id}-{connector}-{task}``) and the group's leader writing the config
topic (``connect-cluster-{group.id}``, as Kafka Connect's leader) both use it: a replaced instance or a
leader that lost its group can no longer commit anything once its successor claimed the fence.

>>> fence = ProducerFence("connect-cluster-nb", {"bootstrap.servers": "127.0.0.1:9092"})  # doctest: +SKIP
>>> fence.claim()                                                                       # doctest: +SKIP
>>> with fence.transaction() as producer:                                               # doctest: +SKIP
...     producer.produce("nb-configs", b"{}", b"connector-x")
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from connect_magics.api.errors import ConnectException
from connect_magics.storage.kafka_log import client_logger

log = logging.getLogger(__name__)

_FENCED = {KafkaError._FENCED, getattr(KafkaError, "PRODUCER_FENCED", 90), KafkaError.INVALID_PRODUCER_EPOCH}


class FencedError(ConnectException):
    """A newer holder claimed the fence (or it was never claimed here): nothing may be written through it."""


def is_fenced(error: BaseException) -> bool:
    """True if ``error`` says a newer producer with the same transactional id started."""
    if isinstance(error, KafkaException) and error.args and isinstance(error.args[0], KafkaError):
        return error.args[0].code() in _FENCED
    return False


def _retriable(error: KafkaException) -> bool:
    return bool(error.args) and isinstance(error.args[0], KafkaError) and error.args[0].retriable()


def _fatal(error: BaseException) -> bool:
    return isinstance(error, KafkaException) and bool(error.args) and isinstance(error.args[0], KafkaError) \
        and error.args[0].fatal()


class ProducerFence:
    """A transactional producer whose every write is a transaction, refused once a newer holder claimed
    the same id. ``what`` names the holder in errors ("Task lines-0", "The leader of group nb")."""

    error_class: type[FencedError] = FencedError
    successor = "a newer holder claimed it"  # how errors say why

    def __init__(self, transactional_id: str, client_config: Mapping[str, Any], timeout: float = 30.0,
                 what: str | None = None) -> None:
        self.transactional_id = transactional_id
        self.timeout = timeout
        self.what = what or f"The holder of transactional id {transactional_id}"
        self._config = dict(client_config)
        self._producer: Producer | None = None
        self._fenced = False
        self._claiming: threading.Thread | None = None  # a claim going on in the background
        self._closed = threading.Event()
        self._lock = threading.Lock()  # one transaction at a time

    @property
    def producer(self) -> Producer:
        """The claimed producer (raises :attr:`error_class` if not claimed or fenced)."""
        if self._producer is None:
            raise self._refused()
        return self._producer

    @property
    def claimed(self) -> bool:
        """True while this holder may write: claimed and not fenced since."""
        return self._producer is not None

    def claim(self, wait: bool = True) -> None:
        """Become the current holder: every earlier holder's transactions are refused from now on (an
        open one is aborted). Without ``wait`` the claim goes on in the background, retried while the
        broker cannot be reached, and the first transaction waits for it (an at-least-once task starts at
        once during a broker outage; a duplicate is the worst an earlier holder can cause meanwhile)."""
        self._closed.clear()
        if wait:
            self._claim_now()
            return
        self._claiming = threading.Thread(target=self._claim_until_done, name=f"claim-{self.transactional_id}",
                                          daemon=True)
        self._claiming.start()

    def _claim_now(self) -> None:
        producer = Producer({**self._config, "transactional.id": self.transactional_id,
                             "enable.idempotence": True, "logger": client_logger("producer")})
        producer.init_transactions(self.timeout)
        with self._lock:
            self._producer, self._fenced = producer, False

    def _claim_until_done(self) -> None:
        while not self._closed.is_set():
            try:
                self._claim_now()
                return
            except KafkaException as e:
                if not e.args[0].retriable():
                    log.error("%s could not claim transactional id %s: %s", self.what, self.transactional_id, e)
                    return
                log.warning("%s: claiming transactional id %s failed, retrying: %s", self.what,
                            self.transactional_id, e)
                self._closed.wait(1.0)

    def wait_claimed(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for a claim going on in the background; True if this holder may write."""
        claiming = self._claiming
        if claiming is not None and claiming.is_alive():
            claiming.join(timeout)
        return self.claimed

    def _await_claim(self) -> None:
        claiming = self._claiming
        if claiming is not None and claiming.is_alive():
            claiming.join(self.timeout)
            if claiming.is_alive():
                raise KafkaException(KafkaError(KafkaError._TIMED_OUT,
                                                f"{self.what} has not claimed transactional id "
                                                f"{self.transactional_id} yet (is the broker reachable?)"))

    def _refused(self, cause: BaseException | None = None) -> FencedError:
        reason = self.successor if cause is not None or self._fenced else "it was not claimed here"
        self._producer, self._fenced = None, True
        error = self.error_class(f"{self.what} was fenced: {reason} (transactional id {self.transactional_id})")
        error.__cause__ = cause
        return error

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Producer]:
        """A transaction, committed on exit; raises :attr:`error_class` if a newer holder claimed the fence
        (or it was never claimed), and aborts (re-raising) on any other failure."""
        self._await_claim()
        with self._lock:
            producer = self.begin()
            try:
                yield producer
            except BaseException as e:
                self.abort(e)
                raise
            self.commit()

    def begin(self) -> Producer:
        """Open a transaction and return the producer to write in it (for transactions that span several
        steps, as an exactly-once source task's; end it with :meth:`commit` or :meth:`abort`)."""
        self._await_claim()
        producer = self._producer
        if producer is None:
            raise self._refused()
        try:
            producer.begin_transaction()
        except KafkaException as e:
            self._raise_if_fenced(e)
            raise
        return producer

    def commit(self) -> None:
        """Commit the open transaction (its records are flushed first). A broker that cannot be reached is
        waited for: librdkafka keeps the transaction, and the commit is tried again. Raises
        :attr:`error_class` if fenced; other failures abort the transaction and are re-raised."""
        producer = self._producer
        if producer is None:
            raise self._refused()
        while True:
            try:
                producer.commit_transaction(self.timeout)
                return
            except KafkaException as e:
                if _retriable(e) and not self._closed.is_set():
                    log.warning("%s: committing its transaction failed, retrying: %s", self.what, e)
                    continue
                self.abort(e)
                raise
            except BaseException as e:
                self.abort(e)
                raise

    def abort(self, cause: BaseException | None = None) -> None:
        """Abort the open transaction (its records are never read committed). Raises :attr:`error_class`
        when the abort shows the fence was lost, or when ``cause`` says so."""
        producer = self._producer
        if producer is None:
            return
        # A fenced producer's error can surface as the commit's, the flush's or a callback's; its abort
        # then fails with the same fatal error.
        if (cause is not None and (is_fenced(cause) or _fatal(cause))) or not self._abort(producer):
            raise self._refused(cause or KafkaException(KafkaError(KafkaError._FENCED))) from cause

    def _raise_if_fenced(self, error: BaseException) -> None:
        if is_fenced(error) or _fatal(error):
            raise self._refused(error) from error

    def _abort(self, producer: Producer) -> bool:
        """Abort the open transaction (trying again while the broker cannot be reached); False if the
        producer was fenced (or failed fatally)."""
        while True:
            try:
                producer.abort_transaction(self.timeout)
                return True
            except KafkaException as e:
                if is_fenced(e) or _fatal(e):
                    return False
                if not _retriable(e) or self._closed.is_set():
                    log.warning("%s could not abort its transaction: %s", self.what, e)
                    return True
                log.warning("%s: aborting its transaction failed, retrying: %s", self.what, e)

    def close(self) -> None:
        """Give up the fence (what was committed stays; nothing is left to flush outside a transaction)."""
        self._closed.set()
        with self._lock:
            self._producer = None
