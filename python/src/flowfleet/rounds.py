"""Enqueueing a round: one rollout per group, a few in flight, answered in order (the
TypeScript SDK's ``enqueueRound``)."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from .errors import FlowfleetError
from .transport import Call
from .types import EnqueuedRollout

#: Enqueues of a round in flight at once.
ROUND_CONCURRENCY = 4


class RolloutEnqueuer(Protocol):
    def enqueue_rollouts(
        self, request: Mapping[str, Any], *, call: Call | None = None
    ) -> EnqueuedRollout: ...


def enqueue_round(
    enqueuer: RolloutEnqueuer,
    groups: Sequence[Mapping[str, Any]],
    common: Mapping[str, Any],
    *,
    call: Call | None = None,
) -> list[EnqueuedRollout]:
    """One rollout per group (``{"prompt", "seeds"}`` and any per-group fields, e.g. the prompt's
    ``promptEmbeds``, over the ``common`` fields), at most
    ``ROUND_CONCURRENCY`` in flight, answered in the order of ``groups``. At the first failure no
    further group is sent; the error keeps its code and lists the rollouts already enqueued in
    ``details["enqueued"]`` (the original error is its cause).

    :raises FlowfleetError: whatever ``enqueue_rollouts`` raises
    """
    results: list[EnqueuedRollout | None] = [None] * len(groups)
    lock = threading.Lock()
    state: dict[str, Any] = {"next": 0, "failure": None}

    def sender() -> None:
        while True:
            with lock:
                if state["failure"] is not None or state["next"] >= len(groups):
                    return
                index = state["next"]
                state["next"] += 1
            group = groups[index]
            request = {**common, **group, "seeds": list(group["seeds"])}
            try:
                results[index] = enqueuer.enqueue_rollouts(request, call=call)
            except BaseException as error:  # noqa: BLE001 - re-raised below, in order
                with lock:
                    if state["failure"] is None:
                        state["failure"] = error

    workers = min(ROUND_CONCURRENCY, len(groups))
    if workers > 0:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for future in [pool.submit(sender) for _ in range(workers)]:
                future.result()
    failure = state["failure"]
    if failure is None:
        return [r for r in results if r is not None]
    enqueued = [r for r in results if r is not None]
    if not enqueued or not isinstance(failure, FlowfleetError):
        raise failure
    raise FlowfleetError(
        failure.code,
        f"{failure.message} ({len(enqueued)} of {len(groups)} rollouts were enqueued before it)",
        {**failure.details, "enqueued": enqueued},
        cause=failure,
    )
