"""Waiting on the coordinator: a rollout job to complete (with a progress bar when tqdm is
installed), and a weight version to be loaded by the live fleet (the TypeScript SDK's
``waitForJob`` and ``waitForSync``)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .errors import FlowfleetError, invalid_option
from .retry import cancellable_sleep
from .transport import Call
from .types import Fleet, JobStatus, SyncStatus, VersionStatus, WeightReport, WeightVersionReport

#: First poll interval and its cap (s): it grows ×1.5 while nothing changes.
WAIT_POLL_S = 0.25
WAIT_MAX_POLL_S = 2.0
#: How long each status request may wait on the coordinator for a change (s; the server caps it at
#: 30). A request in flight cannot be cancelled, so this also bounds how late `cancel` is seen.
WAIT_LONG_POLL_S = 5.0
MAX_LONG_POLL_S = 30.0
#: waitForSync's default timeout and poll interval (s).
SYNC_TIMEOUT_S = 60.0
SYNC_POLL_S = 0.25
#: The coordinator reports at most this many versions per call.
_MAX_REPORT_VERSIONS = 100


def check_positive(value: object, option: str, integer: bool = False) -> float:
    """A positive finite number (integer when asked). :raises FlowfleetError: CLIENT_INVALID_OPTIONS"""
    ok = (
        not isinstance(value, bool)
        and isinstance(value, (int, float))
        and value == value
        and 0 < value < float("inf")
        and (not integer or float(value).is_integer())
    )
    if not ok:
        kind = "integer" if integer else "number"
        raise invalid_option(f"{option} must be a positive {kind}, got {value!r}", option)
    assert isinstance(value, (int, float))
    return float(value)


class JobSource(Protocol):
    def status(
        self,
        id: str,
        *,
        call: Call | None = None,
        wait_s: float | None = None,
        seen: JobStatus | None = None,
    ) -> JobStatus: ...


class SyncSource(Protocol):
    def weights(
        self, component: str, *, limit: int | None = None, call: Call | None = None
    ) -> WeightReport: ...

    def fleet(self, *, call: Call | None = None) -> Fleet: ...


def job_failed_error(status: JobStatus) -> FlowfleetError:
    """``CLIENT_JOB_FAILED`` carrying the server's envelope in ``details["error"]``; the cause is
    a FlowfleetError with the job's own code."""
    envelope: dict[str, Any] = dict(status.get("error") or {"code": "INTERNAL_ERROR", "message": "failed"})
    details: dict[str, Any] = {
        "id": status["id"],
        "lane": status["lane"],
        "attempts": status["attempts"],
        "error": envelope,
    }
    if "worker" in status:
        details["worker"] = status["worker"]
    inner = envelope.get("details")
    return FlowfleetError(
        "CLIENT_JOB_FAILED",
        f"rollout {status['id']} failed after {status['attempts']} attempt(s): "
        f"{envelope['code']}: {envelope['message']}",
        details,
        cause=FlowfleetError(envelope["code"], envelope["message"], inner if isinstance(inner, dict) else {}),
    )


class _Bar:
    """A tqdm bar over denoise steps when tqdm is installed; ``enabled=None``: only on a terminal."""

    def __init__(self, enabled: bool | None, description: str) -> None:
        self._bar: Any = None
        if enabled is False:
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:
            if enabled:
                raise invalid_option("progress=True needs tqdm (pip install tqdm)", "progress") from None
            return
        self._bar = tqdm(
            total=None, desc=description, unit="step", disable=None if enabled is None else False
        )

    def update(self, status: JobStatus) -> None:
        if self._bar is None:
            return
        progress = status["progress"]
        if self._bar.total != progress["steps"]:
            self._bar.total = progress["steps"]
        self._bar.n = progress["step"]
        self._bar.set_postfix_str(f"{status['status']} on {status.get('worker', '-')}", refresh=False)
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def wait_for_job(
    source: JobSource,
    id: str,
    *,
    on_progress: Callable[[JobStatus], None] | None = None,
    progress: bool | None = None,
    poll_s: float = WAIT_POLL_S,
    max_poll_s: float = WAIT_MAX_POLL_S,
    timeout_s: float | None = None,
    cancel: threading.Event | None = None,
    long_poll_s: float = WAIT_LONG_POLL_S,
) -> JobStatus:
    """Waits until job ``id`` completes (answers the final status) or fails.

    ``on_progress`` is told whenever state, step or attempt count changes. Each request long-polls:
    the coordinator answers when the job changes, or after ``long_poll_s`` unchanged; with
    ``long_poll_s=0`` it polls instead, starting at ``poll_s`` and backing off ×1.5 to
    ``max_poll_s`` while nothing changes (and it falls back to that when a long-poll answers
    unchanged at once). ``progress``: a tqdm bar (None: when tqdm is installed and stderr is a
    terminal; True: always; False: never).

    :raises FlowfleetError: ``CLIENT_JOB_FAILED``, ``CLIENT_TIMEOUT``, ``CLIENT_ABORTED``,
        ``CLIENT_INVALID_OPTIONS``, or any error of ``status``
    """
    poll = check_positive(poll_s, "poll_s")
    max_poll = max(poll, check_positive(max_poll_s, "max_poll_s"))
    limit = float("inf") if timeout_s is None else check_positive(timeout_s, "timeout_s")
    if not isinstance(long_poll_s, (int, float)) or not 0 <= long_poll_s <= MAX_LONG_POLL_S:
        raise invalid_option(
            f"long_poll_s must be in [0, {MAX_LONG_POLL_S:g}], got {long_poll_s!r}", "long_poll_s"
        )
    deadline = time.monotonic() + limit
    call = Call(cancel=cancel)
    interval = poll
    last_key: str | None = None
    last: JobStatus | None = None
    bar = _Bar(progress, f"rollout {id[-8:]}")
    try:
        while True:
            asked = time.monotonic()
            wait = min(float(long_poll_s), max(0.0, deadline - asked))
            long_polled = last is not None and wait >= 0.001
            if long_polled:
                status = source.status(id, call=call, wait_s=wait, seen=last)
            else:
                status = source.status(id, call=call)
            last = status
            # Unchanged well before `wait` means nobody waited (an older coordinator): sleep then.
            waited = long_polled and time.monotonic() - asked >= 0.9 * wait
            # The coordinator reads a job's record and its state in two steps: the first `failed`
            # may carry the record from just before the failure; a second read is consistent.
            if status["status"] == "failed":
                status = source.status(id, call=call)
            p = status["progress"]
            key = f"{status['status']} {p['step']}/{p['steps']} {status['attempts']}"
            changed = key != last_key
            if changed:
                last_key = key
                interval = poll
                bar.update(status)
                if on_progress is not None:
                    on_progress(status)
            else:
                interval = min(max_poll, interval * 1.5)
            if status["status"] == "completed":
                return status
            if status["status"] == "failed":
                raise job_failed_error(status)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise FlowfleetError(
                    "CLIENT_TIMEOUT",
                    f"rollout {id} did not finish within {limit:g} s",
                    {"what": "waitFor", "id": id, "timeoutMs": limit * 1000, "last": status},
                )
            if long_poll_s == 0 or (long_polled and not changed and not waited):
                cancellable_sleep(min(interval, remaining), cancel, f"waiting for rollout {id}")
            elif cancel is not None and cancel.is_set():
                cancellable_sleep(0, cancel, f"waiting for rollout {id}")
    finally:
        bar.close()


@dataclass(frozen=True)
class SyncProgress:
    """Where a weight version stands across the live fleet."""

    component: str
    version: int
    #: The coordinator's verdict on the version.
    status: VersionStatus
    #: Live workers that acked ``ok``.
    ok_workers: list[str]
    #: Every live worker.
    live_workers: list[str]
    #: Worker id → its ack (live or not).
    acks: dict[str, SyncStatus] = field(default_factory=dict)
    #: Worker id → why it refused or failed.
    reasons: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "component": self.component,
            "version": self.version,
            "status": self.status,
            "okWorkers": self.ok_workers,
            "liveWorkers": self.live_workers,
            "acks": self.acks,
            "reasons": self.reasons,
        }


def _progress_of(component: str, version: int, entry: WeightVersionReport, fleet: Fleet) -> SyncProgress:
    live = [w["workerId"] for w in fleet["workers"] if w["alive"]]
    acks = dict(entry["acks"])
    return SyncProgress(
        component,
        version,
        entry["status"],
        [w for w in live if acks.get(w) == "ok"],
        live,
        acks,
        dict(entry["reasons"]),
    )


def _reasons(progress: SyncProgress, workers: list[str]) -> str:
    return "; ".join(f"{w}: {progress.reasons.get(w, 'refused')}" for w in workers)


def wait_for_sync(
    source: SyncSource,
    component: str,
    version: int,
    *,
    min_workers: int | None = None,
    timeout_s: float = SYNC_TIMEOUT_S,
    poll_s: float = SYNC_POLL_S,
    on_update: Callable[[SyncProgress], None] | None = None,
    cancel: threading.Event | None = None,
) -> SyncProgress:
    """Polls the weight report and the fleet until the version is loaded: by at least
    ``min_workers`` live workers, or (``min_workers=None``) by every live worker, at least one.
    Only live workers whose ack is ``ok`` count. This is the on-policy fence: once it returns,
    the coordinator counts the version as served (``current``), and a rollout that requires it
    is accepted and runs on it.

    :raises FlowfleetError: ``CLIENT_SYNC_FAILED`` (the version failed everywhere, was superseded
        before anyone loaded it, or — waiting for every live worker — a live worker refused it),
        ``CLIENT_UNKNOWN_VERSION``, ``CLIENT_TIMEOUT`` (``details["last"]``: the last progress),
        ``CLIENT_ABORTED``, ``CLIENT_INVALID_OPTIONS``, or any error of the two reads
    """
    check_positive(version, "version", integer=True)
    if min_workers is not None:
        check_positive(min_workers, "min_workers", integer=True)
    limit_s = check_positive(timeout_s, "timeout_s")
    poll = check_positive(poll_s, "poll_s")
    deadline = time.monotonic() + limit_s
    call = Call(cancel=cancel)
    name = f"{component} v{version}"
    limit = _MAX_REPORT_VERSIONS
    last_key: str | None = None
    while True:
        report = source.weights(component, limit=limit, call=call)
        fleet = source.fleet(call=call)
        entry = report["versions"].get(str(version))
        if entry is None:
            if limit < _MAX_REPORT_VERSIONS:
                limit = _MAX_REPORT_VERSIONS
                continue
            newest = report["latest"]
            raise FlowfleetError(
                "CLIENT_UNKNOWN_VERSION",
                f"{name} was never synced (latest: {newest['version'] if newest else 'none'})",
                {"component": component, "version": version, "current": report["current"], "latest": newest},
            )
        latest = report["latest"]["version"] if report["latest"] is not None else version
        limit = min(_MAX_REPORT_VERSIONS, max(1, latest - version + 1))
        progress = _progress_of(component, version, entry, fleet)
        key = json.dumps([progress.status, progress.live_workers, progress.acks], sort_keys=True)
        if key != last_key:
            last_key = key
            if on_update is not None:
                on_update(progress)
        ok = len(progress.ok_workers)
        met = (
            ok >= min_workers
            if min_workers is not None
            else (len(progress.live_workers) > 0 and ok == len(progress.live_workers))
        )
        if met:
            return progress
        # A refusal is final for that worker: "every live worker" can no longer be met.
        refused = (
            []
            if min_workers is not None
            else [w for w in progress.live_workers if progress.acks.get(w) == "refused"]
        )
        if progress.status in ("failed", "superseded") or refused:
            if progress.status == "failed":
                why = "failed: no worker could load it (" + _reasons(progress, list(progress.reasons)) + ")"
            elif progress.status == "superseded":
                why = f"was superseded by v{latest} before any worker loaded it"
            else:
                listed = _reasons(progress, refused)
                why = f"live workers refused it, so not every live worker can load it ({listed})"
            raise FlowfleetError(
                "CLIENT_SYNC_FAILED",
                f"{name} {why}",
                {**progress.as_dict(), "current": report["current"], "latest": report["latest"]},
            )
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            target: dict[str, Any] = {"minWorkers": min_workers} if min_workers is not None else {"all": True}
            raise FlowfleetError(
                "CLIENT_TIMEOUT",
                f"{name}: {ok} of {len(progress.live_workers)} live workers loaded it within {limit_s:g} s",
                {
                    "what": "waitForSync",
                    "timeoutMs": limit_s * 1000,
                    "target": target,
                    "last": progress.as_dict(),
                },
            )
        cancellable_sleep(min(poll, remaining), cancel, f"waiting for {name}")
