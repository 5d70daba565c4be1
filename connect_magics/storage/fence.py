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
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from confluent_kafka import KafkaError, KafkaException, Producer

from connect_magics.api.errors import ConnectException
from connect_magics.storage.authorization import KafkaAccessError, access_error, authorization_code
from connect_magics.storage.client_limit import ClientLimitError, Reservation, new_client
from connect_magics.storage.client_logs import client_logger

log = logging.getLogger(__name__)

_FENCED = {KafkaError._FENCED, getattr(KafkaError, "PRODUCER_FENCED", 90), KafkaError.INVALID_PRODUCER_EPOCH}

#: Task claims running at once in a process against one cluster (each: the owner told, a transactional producer
#: built, ``init_transactions``, the owner asked); the others wait their turn. Hundreds of task instances starting
#: together (a member's share of the group after another left) otherwise claimed all at once, each while the
#: transaction coordinator aborted its predecessor's open transaction: on 2 cores claims and commits timed out,
#: were retried, and tasks failed (bench/bench_scale.py, 1,000 connectors; 48 at once failed 1,349 of 2,000).
CONCURRENT_CLAIMS = 16
_claim_turns: dict[str, threading.BoundedSemaphore] = {}
_claim_turns_lock = threading.Lock()


def claim_turns(bootstrap_servers: str) -> threading.BoundedSemaphore:
    """The turns of the claims against the cluster at ``bootstrap_servers`` (as a client config spells it): a
    cluster that is away holds its own claims' turns only, not those of another runtime's cluster.

    >>> claim_turns("b1:9092,b2:9092") is claim_turns(" b2:9092, b1:9092")
    True
    """
    key = ",".join(sorted(part.strip() for part in bootstrap_servers.split(",") if part.strip()))
    with _claim_turns_lock:
        return _claim_turns.setdefault(key, threading.BoundedSemaphore(CONCURRENT_CLAIMS))


class FencedError(ConnectException):
    """A newer holder claimed the fence (or it was never claimed here): nothing may be written through it."""


class TransactionLostError(ConnectException):
    """A transaction did not commit (a broker outage, a coordinator that moved or timed it out) while no newer
    holder exists: what it held is not written, and the holder goes on (its fence claims the id again if the
    producer was lost)."""


class FenceOwner(Protocol):
    """Who may hold a fence: tells a real successor from a producer that an outage broke (see
    :class:`~connect_magics.runtime.worker.fencing.TaskOwnership`)."""

    def register(self) -> None:
        """Record this holder before its first claim (so that an older holder can tell it is older)."""

    def is_current(self) -> bool:
        """True if no newer holder was recorded (raises if that cannot be told now: the broker is away)."""

    def superseded(self) -> bool:
        """True if a newer holder is already known here, without asking the broker."""


def is_fenced(error: BaseException) -> bool:
    """True if ``error`` says a newer producer with the same transactional id started."""
    if isinstance(error, KafkaException) and error.args and isinstance(error.args[0], KafkaError):
        return error.args[0].code() in _FENCED
    return False


def broken_producer_error(error: BaseException) -> KafkaException | None:
    """The error (or its cause) that says a transactional producer can no longer be used: fenced, or failed
    fatally; None if there is none (errors raised in delivery callbacks reach Python as their causes)."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, KafkaException) and (is_fenced(seen) or _fatal(seen)):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


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
                 what: str | None = None, owner: FenceOwner | None = None) -> None:
        """``owner``: who may hold it. Without one, any error that looks like a fence (``PRODUCER_FENCED``,
        ``INVALID_PRODUCER_EPOCH``, a fatal producer error) is taken as a newer holder's claim; with one, it
        is asked, and when no newer holder exists the fence claims the id again and goes on."""
        self.transactional_id = transactional_id
        self.timeout = timeout
        self.what = what or f"The holder of transactional id {transactional_id}"
        self.owner = owner
        self._config = dict(client_config)
        self._turns = claim_turns(str(self._config.get("bootstrap.servers", "")))
        self._producer: Producer | None = None
        self._fenced = False
        self._claim_error: BaseException | None = None  # why a claim failed for good
        self.reclaims = 0  # how often a lost producer was replaced
        self._claiming: threading.Thread | None = None  # a claim going on in the background
        # A producer whose init_transactions timed out: librdkafka goes on with it, and the same call again resumes
        # the claim ("retry call to resume") instead of a new producer starting over.
        self._resuming: Producer | None = None
        self._closed = threading.Event()
        self._lock = threading.Lock()  # one transaction at a time
        #: The Kafka clients promised to the holder in this process (storage/client_limit.py), or None.
        self.reservation: Reservation | None = None

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

    def claim(self, wait: bool = True, abandon: Callable[[], bool] | None = None) -> bool:
        """Become the current holder: every earlier holder's transactions are refused from now on (an
        open one is aborted). Without ``wait`` the claim goes on in the background, retried while the
        broker cannot be reached, and the first transaction waits for it (an at-least-once task starts at
        once during a broker outage; a duplicate is the worst an earlier holder can cause meanwhile).
        With ``wait`` and no ``abandon`` one attempt is made at once (no turn), and its error raised. With
        ``abandon`` (a task's claim at its start) the claim takes its turn and is retried as in the background
        until it is done, so that a slow or absent broker does not fail the task (hundreds starting together
        timed out), and raises what made it fail for good (a missing ACL, no Kafka client left, a non-retriable
        error); False if ``abandon()`` said to give up meanwhile, while it waited for its turn
        (:data:`CONCURRENT_CLAIMS`) or to try again."""
        self._closed.clear()
        self._claim_error = None
        if not wait:
            self._claim_in_background(again=False)
            return True
        if abandon is None:  # the leader's claim, zombie fencing before an offsets change: no turn to wait for
            if self.owner is not None:  # behind task claims, one attempt, its error to the caller
                self.owner.register()
            self._claim_now()
            return True
        if not self._claim_until_done(False, abandon):
            return False
        if self._claim_error is not None:
            raise self._claim_error
        return True

    @contextlib.contextmanager
    def _turn(self, abandon: Callable[[], bool]) -> Iterator[bool]:
        """This claim's turn among those of the process against its cluster (:data:`CONCURRENT_CLAIMS`): True once
        it is, False if ``abandon()`` said to give up before (asked twice a second: hundreds of claims wait at once
        when a member's share of the group moves, and each wake-up of each takes the interpreter's lock)."""
        while not self._turns.acquire(timeout=0.5):
            if abandon():
                yield False
                return
        try:
            yield True
        finally:
            self._turns.release()

    def _claim_in_background(self, again: bool) -> None:
        self._claiming = threading.Thread(target=self._claim_until_done, args=(again,),
                                          name=f"claim-{self.transactional_id}", daemon=True)
        self._claiming.start()

    def _claim_now(self) -> None:
        producer, self._resuming = self._resuming, None
        if producer is None:
            producer = new_client(Producer, {**self._config, "transactional.id": self.transactional_id,
                                             "enable.idempotence": True, "logger": client_logger("producer")},
                                  self.what, self.reservation)
        try:
            producer.init_transactions(self.timeout)
        except KafkaException as e:  # a missing ACL is named (WRITE on the transactional id), never retried
            named = access_error(e, self._config, f"{self.what} claims its transactional id",
                                 transactional_id=("WRITE", self.transactional_id))
            if named is not None:
                raise named from e
            if e.args and isinstance(e.args[0], KafkaError) and e.args[0].code() == KafkaError._TIMED_OUT \
                    and not self._closed.is_set():
                self._resuming = producer
            raise
        # A successor may have registered and claimed between this holder's registration and its claim (a process
        # paused in between, then woken): this claim fenced the successor, which claims again; this one must not
        # write. Asked after the claim, so that no successor can register unseen; the producer is published only then.
        if self.owner is not None and not self._still_current():
            log.warning("%s: a newer holder of transactional id %s registered before this claim; it will not write",
                        self.what, self.transactional_id)
            with self._lock:
                self._producer, self._fenced = None, True
            return
        with self._lock:
            if self._closed.is_set():  # closed while it claimed (its task stopped): the producer is not kept
                return
            self._producer, self._fenced = producer, False

    def _still_current(self) -> bool:
        """The owner's answer, asked again while it cannot tell (the broker is slow or away) up to the fence's
        timeout; after that the claim stands, as it did before this check existed (its epoch is the newest)."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                return self.owner.is_current()
            except Exception as e:  # noqa: BLE001 - the control topic could not be read in time
                if time.monotonic() >= deadline or self._closed.is_set():
                    log.warning("%s cannot tell whether a newer holder of transactional id %s registered (%s); it "
                                "holds it", self.what, self.transactional_id, e)
                    return True
                self._closed.wait(1.0)

    def _claim_until_done(self, again: bool, abandon: Callable[[], bool] | None = None) -> bool:
        """Claim, retrying while the broker cannot be reached. The first claim registers with the owner
        first; a claim ``again`` (the producer was lost) happens only if the owner says no newer holder exists.
        False if ``abandon()`` (by default: the fence was closed) said to give up before it ended."""
        abandon = abandon or self._closed.is_set
        backoff = 1.0
        asked = self.owner is None
        while not abandon():
            try:
                with self._turn(abandon) as mine:
                    if not mine:
                        return False
                    if not asked and not again:
                        self.owner.register()
                    elif not asked and not self.owner.is_current():
                        log.warning("%s: a newer holder of transactional id %s exists", self.what,
                                    self.transactional_id)
                        self._fenced = True
                        return True
                    asked = True
                    self._claim_now()
                    return True
            except (KafkaAccessError, ClientLimitError) as e:  # an ACL to grant, no key left: the task fails, naming it
                log.error("%s", e)
                self._claim_error = e
                return True
            except KafkaException as e:
                if asked and e.args and isinstance(e.args[0], KafkaError) and not e.args[0].retriable():
                    log.error("%s could not claim transactional id %s: %s", self.what, self.transactional_id, e)
                    self._claim_error = e
                    return True
                log.warning("%s: claiming transactional id %s failed, retrying in %.0f s: %s", self.what,
                            self.transactional_id, backoff, e)
            except Exception as e:  # noqa: BLE001 - the owner could not tell (the broker is away): ask again
                log.warning("%s: cannot tell yet whether it still holds transactional id %s, asking again in "
                            "%.0f s: %s", self.what, self.transactional_id, backoff, e)
            retry = time.monotonic() + backoff
            while time.monotonic() < retry and not abandon():
                self._closed.wait(0.1)
            backoff = min(backoff * 2, 10.0)
        return False

    def wait_claimed(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for a claim going on in the background; True if this holder may write,
        False while the claim goes on. Raises :attr:`error_class` if a newer holder exists, and
        :class:`~connect_magics.api.errors.ConnectException` if the claim failed for good."""
        claiming = self._claiming
        if claiming is not None and claiming.is_alive():
            claiming.join(timeout)
            if claiming.is_alive():
                return False
        if isinstance(self._claim_error, (KafkaAccessError, ClientLimitError)):
            raise self._claim_error
        if self._claim_error is not None:
            raise ConnectException(f"{self.what} could not claim transactional id {self.transactional_id}: "
                                   f"{self._claim_error}") from self._claim_error
        if self._producer is None:
            raise self._refused()
        return True

    def check_claim(self) -> None:
        """Raise the :class:`~connect_magics.storage.authorization.KafkaAccessError` that made a background claim
        fail for good (a missing ACL), or the :class:`~connect_magics.storage.client_limit.ClientLimitError` that
        kept it from building its producer, so that a task fails at once rather than at its first commit."""
        if isinstance(self._claim_error, (KafkaAccessError, ClientLimitError)):
            raise self._claim_error

    def _await_claim(self, timeout: float | None = None) -> None:
        if not self.wait_claimed(self.timeout if timeout is None else timeout):
            raise TransactionLostError(f"{self.what} has not claimed transactional id {self.transactional_id} yet "
                                       "(is the broker reachable?)")

    def _refused(self, cause: BaseException | None = None) -> FencedError:
        reason = self.successor if cause is not None or self._fenced else "it was not claimed here"
        self._producer, self._fenced = None, True
        error = self.error_class(f"{self.what} was fenced: {reason} (transactional id {self.transactional_id})")
        error.__cause__ = cause
        return error

    @contextlib.contextmanager
    def transaction(self, timeout: float | None = None) -> Iterator[Producer]:
        """A transaction, committed on exit; raises :attr:`error_class` if a newer holder claimed the fence
        (or it was never claimed), :class:`TransactionLostError` if a Kafka error aborted it (or, with
        ``timeout``, if it could not commit within that many seconds), and aborts (re-raising) on any other
        failure."""
        self._await_claim(timeout)
        with self._lock:
            producer = self.begin()
            try:
                yield producer
            except BaseException as e:
                self.abort(e)
                raise
            self.commit(timeout)

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
            self._lost(e)
        return producer

    def commit(self, timeout: float | None = None) -> None:
        """Commit the open transaction (its records are flushed first). A broker that cannot be reached is
        waited for (up to ``timeout`` if given): librdkafka keeps the transaction, and the commit is tried again. Raises
        :attr:`error_class` if fenced, :class:`TransactionLostError` if a Kafka error aborted it; other
        failures abort the transaction and are re-raised."""
        producer = self._producer
        if producer is None:
            raise self._refused()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                producer.commit_transaction(self.timeout if deadline is None
                                            else max(0.1, min(self.timeout, deadline - time.monotonic())))
                return
            except KafkaException as e:
                if _retriable(e) and not self._closed.is_set() and (deadline is None or time.monotonic() < deadline):
                    log.warning("%s: committing its transaction failed, retrying: %s", self.what, e)
                    continue
                if _retriable(e) and deadline is not None:  # librdkafka still ends it: an abort would conflict
                    self._producer_lost(e)
                self.abort(e)
            except BaseException as e:
                self.abort(e)
                raise

    def abort(self, cause: BaseException | None = None) -> None:
        """Abort the open transaction (its records are never read committed). Raises :attr:`error_class`
        when a newer holder claimed the fence, and :class:`TransactionLostError` when ``cause`` is a Kafka
        error (the transaction is gone either way)."""
        producer = self._producer
        if cause is not None and authorization_code(cause) is not None:
            # A missing ACL (WRITE on a topic of the transaction), not a successor: the transaction is gone; a
            # producer its abort broke is replaced by a claim of the same holder. Callers name the resource.
            if producer is not None and not self._abort(producer):
                self._producer = None
                self._claim_in_background(again=True)
            raise TransactionLostError(f"{self.what}'s transaction was aborted: {cause}") from cause
        # A fenced producer's error can surface as the commit's, the flush's or a callback's; its abort
        # then fails with the same fatal error.
        if producer is not None and ((cause is not None and (is_fenced(cause) or _fatal(cause)))
                                     or not self._abort(producer)):
            self._producer_lost(cause or KafkaException(KafkaError(KafkaError._FENCED)))
        if isinstance(cause, KafkaException):
            raise TransactionLostError(f"{self.what}'s transaction was aborted: {cause}") from cause

    def _lost(self, error: KafkaException) -> None:
        """``begin_transaction`` failed: the producer is broken (fenced or fatal) or the call was refused."""
        if is_fenced(error) or _fatal(error):
            self._producer_lost(error)
        raise TransactionLostError(f"{self.what} could not begin a transaction: {error}") from error

    def _producer_lost(self, cause: BaseException) -> None:
        """The producer can no longer be used. Without an owner that is a newer holder's claim (raises
        :attr:`error_class`); with one, the id is claimed again in the background if the owner says no newer
        holder exists, and :class:`TransactionLostError` is raised (the next transaction waits for the claim,
        and raises :attr:`error_class` if a newer holder exists after all)."""
        if self.owner is None:
            raise self._refused(cause) from cause
        self._producer = None
        self.reclaims += 1
        log.warning("%s lost its transactional producer (%s); claiming transactional id %s again unless a newer "
                    "holder exists", self.what, cause, self.transactional_id)
        self._claim_in_background(again=True)
        raise TransactionLostError(f"{self.what}'s transaction was lost ({cause}): it claims transactional id "
                                   f"{self.transactional_id} again and goes on from its last commit") from cause

    def _abort(self, producer: Producer) -> bool:
        """Abort the open transaction (trying again while the broker cannot be reached, up to the fence's
        timeout); False if the producer was fenced, failed fatally, or could not abort in that time (a
        transaction librdkafka cannot end after a broker restart: the producer is replaced)."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                producer.abort_transaction(max(0.1, min(self.timeout, deadline - time.monotonic())))
                return True
            except KafkaException as e:
                if is_fenced(e) or _fatal(e) or e.args[0].code() == KafkaError._CONFLICT:
                    return False  # _CONFLICT: a commit librdkafka still works on; the producer is replaced
                if not _retriable(e) or self._closed.is_set():
                    log.warning("%s could not abort its transaction: %s", self.what, e)
                    return True
                if time.monotonic() >= deadline:
                    log.warning("%s could not abort its transaction within %.0f s: %s", self.what, self.timeout, e)
                    return False
                log.warning("%s: aborting its transaction failed, retrying: %s", self.what, e)

    def close(self) -> None:
        """Give up the fence (what was committed stays; nothing is left to flush outside a transaction)."""
        self._closed.set()
        self._resuming = None
        with self._lock:
            self._producer = None
