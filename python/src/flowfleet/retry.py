"""When and how often a failed request is sent again: the TypeScript SDK's policy
(packages/client/README.md "Retry policy"), in seconds rather than milliseconds.

- What: only requests safe to send twice (reads, content-addressed blob uploads, the create-once
  result upload, an enqueue carrying its Idempotency-Key); any request whose connection was
  refused or whose name did not resolve (it never left).
- Which failures: no answer (refused, reset, cut short), a try past its timeout, and 408, 429,
  502, 503, 504, 507 (a full blob store). Never another 4xx, 500 or another 5xx, an answer too
  large, a cancel.
- When: exponential backoff from ``base_delay_s``, doubling to ``max_delay_s``, each wait
  jittered to [½, 1] of it; a longer ``Retry-After`` (seconds or an HTTP date) is honoured.
- How long: at most ``attempts`` tries (``math.inf``: as many as fit); no retry starts more than
  ``deadline_s`` after the first try began (the last wait is shortened to end on it).
"""

from __future__ import annotations

import math
import random
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from email.utils import parsedate_to_datetime

from .errors import FlowfleetError, invalid_option

#: Statuses that say "not now": a proxy, an overloaded or restarting coordinator, a slow body.
RETRY_STATUSES: frozenset[int] = frozenset({408, 429, 502, 503, 504, 507})


def _positive(value: object, option: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not (math.isfinite(value) and value > 0)
    ):
        raise invalid_option(f"{option} must be a positive number, got {value!r}", option)
    return float(value)


@dataclass(frozen=True)
class RetryPolicy:
    """Tries in all (the first included), the backoff, and the deadline; checked on creation.

    :raises FlowfleetError: ``CLIENT_INVALID_OPTIONS`` for a malformed field
    """

    attempts: float = 3
    base_delay_s: float = 0.2
    max_delay_s: float = 2.0
    deadline_s: float = 60.0

    def __post_init__(self) -> None:
        a = self.attempts
        if not (
            a == math.inf
            or (not isinstance(a, bool) and isinstance(a, (int, float)) and float(a).is_integer() and a >= 1)
        ):
            raise invalid_option(
                f"retry.attempts must be a positive integer or math.inf, got {a!r}", "retry.attempts"
            )
        _positive(self.base_delay_s, "retry.base_delay_s")
        _positive(self.max_delay_s, "retry.max_delay_s")
        d = self.deadline_s
        if isinstance(d, bool) or not isinstance(d, (int, float)) or not (math.isfinite(d) and d >= 0):
            raise invalid_option(
                f"retry.deadline_s must be a finite number ≥ 0, got {d!r}", "retry.deadline_s"
            )


#: What a client or a call may pass as ``retry``: a policy, fields laid over the base, or False.
RetryOption = RetryPolicy | Mapping[str, float] | bool | None
_FIELDS = {f.name for f in fields(RetryPolicy)}


def resolve_retry(option: RetryOption, base: RetryPolicy) -> RetryPolicy:
    """``option`` laid over ``base``: None/True keep it, False is one try, a mapping overrides fields.

    :raises FlowfleetError: ``CLIENT_INVALID_OPTIONS``
    """
    if option is None or option is True:
        return base
    if option is False:
        return replace(base, attempts=1)
    if isinstance(option, RetryPolicy):
        return option
    if isinstance(option, Mapping):
        unknown = sorted(set(option) - _FIELDS)
        if unknown:
            raise invalid_option(f"retry has unknown fields {unknown}", "retry")
        return replace(base, **dict(option))
    raise invalid_option(f"retry must be a RetryPolicy, a mapping or a bool, got {option!r}", "retry")


def is_retryable_failure(failure: str | int, idempotent: bool, unsent: bool = False) -> bool:
    """Whether a failed try (``"network"``, ``"timeout"`` or an HTTP status) is sent again."""
    if unsent:
        return True
    if not idempotent:
        return False
    return failure in RETRY_STATUSES if isinstance(failure, int) else True


_HTTP_DATE = re.compile(r"^[A-Za-z]{3}, ")


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """A ``Retry-After`` value (seconds, or an HTTP date) in seconds from now; None when unreadable."""
    if value is None:
        return None
    text = value.strip()
    if re.fullmatch(r"\d+", text):
        return float(int(text))
    if not _HTTP_DATE.match(text):
        return None
    try:
        at = parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, at - (time.time() if now is None else now))


def backoff_delay_s(policy: RetryPolicy, retry: int, rand: Callable[[], float] = random.random) -> float:
    """The wait before retry number ``retry`` (1 = the first): exponential, capped, jittered."""
    delay = min(policy.max_delay_s, policy.base_delay_s * 2.0 ** (retry - 1))
    # Jitter, so that many trainers failed by one outage do not retry in step.
    return delay * (0.5 + rand() / 2)


@dataclass(frozen=True)
class FailedTry:
    """How one try failed: its error, whether to retry, and the server's Retry-After."""

    error: FlowfleetError
    retryable: bool
    retry_after_s: float | None = None


def cancellable_sleep(seconds: float, cancel: threading.Event | None, what: str) -> None:
    """Sleeps, or raises ``CLIENT_ABORTED`` as soon as ``cancel`` is set."""
    if cancel is None:
        time.sleep(seconds)
    elif cancel.wait(seconds):
        raise aborted_error(what)


def aborted_error(what: str) -> FlowfleetError:
    """``CLIENT_ABORTED`` for ``what`` (the caller's cancel event was set)."""
    return FlowfleetError("CLIENT_ABORTED", f"{what}: cancelled", {"what": what})


@dataclass(frozen=True)
class Answered:
    """A try that succeeded: wraps its value (so None can be one)."""

    value: object


def run_with_retry(
    try_once: Callable[[], Answered | FailedTry],
    policy: RetryPolicy,
    *,
    what: str,
    cancel: threading.Event | None = None,
    on_retry: Callable[[int, float, FlowfleetError], None] | None = None,
) -> object:
    """Runs ``try_once`` until it answers, fails unretryably, runs out of tries or of deadline.

    :raises FlowfleetError: the last try's error, or ``CLIENT_ABORTED`` when ``cancel`` is set
    """
    started = time.monotonic()
    attempt = 1
    while True:
        if cancel is not None and cancel.is_set():
            raise aborted_error(what)
        outcome = try_once()
        if isinstance(outcome, Answered):
            return outcome.value
        remaining = policy.deadline_s - (time.monotonic() - started)
        if not outcome.retryable or attempt >= policy.attempts or remaining <= 0:
            raise outcome.error
        delay = min(remaining, max(backoff_delay_s(policy, attempt), outcome.retry_after_s or 0.0))
        if on_retry is not None:
            on_retry(attempt, delay, outcome.error)
        cancellable_sleep(delay, cancel, what)
        attempt += 1
