"""The retry policy and the error mapping of the transport, against a local server that fails on
cue: what is retried (and what never is), backoff with jitter, Retry-After, the deadline, the
per-try timeout, the Idempotency-Key kept across tries, and the coded errors of each failure."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from email.utils import formatdate

import pytest

from flowfleet import Call, Client, FlowfleetError, RetryEvent, RetryPolicy
from flowfleet.retry import backoff_delay_s, is_retryable_failure, parse_retry_after
from scripted_server import Reply, ScriptedServer, free_port, scripted_server

FAST = RetryPolicy(attempts=4, base_delay_s=0.01, max_delay_s=0.02, deadline_s=10)
HEALTHY = {"status": "ok", "redis": "up"}
ENQUEUED = {
    "id": "lane-0123456789abcdef.x",
    "lane": "lane-0123456789abcdef",
    "status": "queued",
    "eligibleWorkers": 1,
}
SYNCED = {
    "component": "dit",
    "version": 2,
    "sha256": "a" * 64,
    "sizeBytes": 1,
    "previous": 1,
}
REDIS_DOWN = {"code": "API_REDIS_UNAVAILABLE", "message": "redis is not ready", "details": {}}


@pytest.fixture()
def server() -> Iterator[ScriptedServer]:
    with scripted_server() as s:
        yield s


def client_of(server: ScriptedServer, **options: object) -> Client:
    options.setdefault("retry", FAST)
    return Client(server.url, "trainer-token-0123456789", **options)  # type: ignore[arg-type]


def test_a_read_is_retried_through_503_429_502_504_408_and_answers() -> None:
    with scripted_server() as server:
        server.script(*(Reply(s, REDIS_DOWN) for s in (503, 429, 502)), Reply(200, HEALTHY))
        events: list[RetryEvent] = []
        with client_of(server, on_retry=events.append) as client:
            assert client.health() == HEALTHY
        assert [e.attempt for e in events] == [1, 2, 3]
        assert [e.error.code for e in events] == ["API_REDIS_UNAVAILABLE"] * 3
        assert all(e.method == "GET" and e.path == "/healthz" for e in events)
        server.script(Reply(504, b"gateway"), Reply(408, b"slow"), Reply(200, HEALTHY))
        with client_of(server) as client:
            assert client.health() == HEALTHY
        assert len(server.seen) == 7
        assert all(s.headers["authorization"] == "Bearer trainer-token-0123456789" for s in server.seen)


@pytest.mark.parametrize("status", [400, 401, 404, 409, 500, 501])
def test_other_statuses_are_never_retried(server: ScriptedServer, status: int) -> None:
    server.script(Reply(status, {"code": "API_JOB_NOT_FOUND", "message": "no", "details": {"id": "x"}}))
    with client_of(server) as client, pytest.raises(FlowfleetError) as failed:
        client.status("x")
    assert len(server.seen) == 1
    assert failed.value.code == "API_JOB_NOT_FOUND" and failed.value.details == {"id": "x"}


def test_the_last_tries_error_is_raised_after_attempts_run_out(server: ScriptedServer) -> None:
    server.script(*(Reply(503, REDIS_DOWN) for _ in range(5)))
    with client_of(server, retry={"attempts": 3, "base_delay_s": 0.01}) as client:
        with pytest.raises(FlowfleetError) as failed:
            client.fleet()
    assert failed.value.code == "API_REDIS_UNAVAILABLE" and len(server.seen) == 3


def test_retry_false_and_a_calls_own_policy(server: ScriptedServer) -> None:
    server.script(Reply(503, REDIS_DOWN), Reply(503, REDIS_DOWN), Reply(200, HEALTHY))
    with client_of(server) as client:
        with pytest.raises(FlowfleetError):
            client.health(call=Call(retry=False))
        assert len(server.seen) == 1
        assert client.health(call=Call(retry={"attempts": 2})) == HEALTHY
    assert len(server.seen) == 3


def test_an_enqueue_keeps_its_idempotency_key_across_tries(server: ScriptedServer) -> None:
    server.script(Reply(503, REDIS_DOWN), Reply(drop=True), Reply(202, ENQUEUED))
    with client_of(server) as client:
        assert client.enqueue_rollouts({"model": "wan21-mini", "prompt": "p", "seeds": [1]}) == ENQUEUED
        keys = {s.headers["idempotency-key"] for s in server.seen}
        assert len(server.seen) == 3 and len(keys) == 1
        assert all(s.method == "POST" and s.path == "/v1/rollouts" for s in server.seen)
        # A caller's key is sent as given; a second call gets a fresh one.
        server.script(Reply(202, ENQUEUED), Reply(202, ENQUEUED))
        client.enqueue_rollouts({"prompt": "p"}, idempotency_key="6f1c2a4e-8d0b-4c1a-9e57-3b2d4f6a8c10")
        client.enqueue_rollouts({"prompt": "p"})
    assert server.seen[3].headers["idempotency-key"] == "6f1c2a4e-8d0b-4c1a-9e57-3b2d4f6a8c10"
    assert server.seen[4].headers["idempotency-key"] not in keys | {server.seen[3].headers["idempotency-key"]}


def test_a_sync_is_sent_once_on_503_and_on_a_dropped_answer(server: ScriptedServer) -> None:
    server.script(Reply(503, REDIS_DOWN), Reply(drop=True))
    with client_of(server) as client:
        with pytest.raises(FlowfleetError) as first:
            client.sync_weights("dit", 2, "a" * 64)
        assert first.value.code == "API_REDIS_UNAVAILABLE" and len(server.seen) == 1
        with pytest.raises(FlowfleetError) as second:
            client.sync_weights("dit", 2, "a" * 64)
        assert second.value.code == "CLIENT_UNREACHABLE" and len(server.seen) == 2


def test_a_refused_connection_is_retried_even_for_a_sync() -> None:
    """Nothing listens on the port at first (the request never left, so even a sync may go
    again); the coordinator comes up there while the client waits, and the retry answers."""
    port = free_port()
    late: list[ScriptedServer] = []

    def on_retry(event: RetryEvent) -> None:
        assert event.error.code == "CLIENT_UNREACHABLE" and event.attempt == 1
        late.append(ScriptedServer(port))
        late[0].script(Reply(202, SYNCED))

    try:
        with Client(f"http://127.0.0.1:{port}", retry=FAST, on_retry=on_retry) as client:
            assert client.sync_weights("dit", 2, "a" * 64) == SYNCED
        assert len(late) == 1 and late[0].seen[0].body == b'{"version":2,"sha256":"%s"}' % (b"a" * 64)
    finally:
        for server in late:
            server.close()


def test_no_coordinator_at_all_is_client_unreachable_after_every_try() -> None:
    events: list[RetryEvent] = []
    with Client(f"http://127.0.0.1:{free_port()}", retry=FAST, on_retry=events.append) as client:
        with pytest.raises(FlowfleetError) as failed:
            client.sync_weights("dit", 2, "a" * 64)
    assert failed.value.code == "CLIENT_UNREACHABLE" and [e.attempt for e in events] == [1, 2, 3]
    assert failed.value.__cause__ is not None and failed.value.details["method"] == "POST"


def test_retry_after_is_honoured_when_longer_than_the_backoff(server: ScriptedServer) -> None:
    server.script(Reply(503, REDIS_DOWN, headers={"retry-after": "1"}), Reply(200, HEALTHY))
    events: list[RetryEvent] = []
    with client_of(server, on_retry=events.append) as client:
        started = time.monotonic()
        assert client.health() == HEALTHY
        waited = time.monotonic() - started
    assert events[0].delay_s == 1.0 and waited >= 1.0


def test_the_deadline_shortens_the_last_wait_and_ends_the_retries(server: ScriptedServer) -> None:
    server.script(*(Reply(503, REDIS_DOWN, headers={"retry-after": "30"}) for _ in range(3)))
    events: list[RetryEvent] = []
    policy = RetryPolicy(attempts=math.inf, base_delay_s=0.01, deadline_s=0.3)
    with client_of(server, retry=policy, on_retry=events.append) as client:
        started = time.monotonic()
        with pytest.raises(FlowfleetError) as failed:
            client.health()
        elapsed = time.monotonic() - started
    assert failed.value.code == "API_REDIS_UNAVAILABLE"
    assert len(events) == 1 and 0 < events[0].delay_s <= 0.3 and elapsed < 5
    assert len(server.seen) == 2


def test_a_try_past_its_timeout_is_client_timeout_and_retried_for_a_read(server: ScriptedServer) -> None:
    hold = threading.Event()
    server.script(Reply(200, HEALTHY, hold=hold), Reply(200, HEALTHY))
    events: list[RetryEvent] = []
    try:
        with client_of(server, timeout_s=0.3, on_retry=events.append) as client:
            assert client.health() == HEALTHY
        assert [e.error.code for e in events] == ["CLIENT_TIMEOUT"]
        assert events[0].error.details["timeoutMs"] == 300
        # A sync past its timeout is not sent again (it may have been applied).
        server.script(Reply(202, SYNCED, hold=hold))
        with client_of(server, timeout_s=0.3) as client, pytest.raises(FlowfleetError) as failed:
            client.sync_weights("dit", 2, "a" * 64)
        assert failed.value.code == "CLIENT_TIMEOUT" and len(server.seen) == 3
    finally:
        hold.set()


def test_error_answers_map_onto_codes(server: ScriptedServer) -> None:
    server.script(
        Reply(502, b"<html>bad gateway</html>"),
        Reply(418, {"code": "not a code", "message": "teapot"}),
        Reply(200, b"not json"),
        Reply(200, {"status": "ok"}),
    )
    with client_of(server, retry=False) as client:
        with pytest.raises(FlowfleetError) as html:
            client.health()
        assert html.value.code == "CLIENT_HTTP_ERROR" and html.value.details["status"] == 502
        assert html.value.details["body"] == "<html>bad gateway</html>"
        with pytest.raises(FlowfleetError) as odd:
            client.health()
        assert odd.value.code == "CLIENT_HTTP_ERROR" and odd.value.details["envelope"]["code"] == "not a code"
        with pytest.raises(FlowfleetError) as not_json:
            client.health()
        assert not_json.value.code == "CLIENT_BAD_RESPONSE"
        with pytest.raises(FlowfleetError) as wrong_shape:
            client.health()
        assert wrong_shape.value.code == "CLIENT_BAD_RESPONSE"
        assert wrong_shape.value.details["issues"] == ["redis: required"]


def test_an_answer_past_max_response_bytes_is_refused_and_not_retried(server: ScriptedServer) -> None:
    server.script(Reply(200, b"x" * 5000), Reply(200, b"y" * 10))
    with client_of(server) as client:
        with pytest.raises(FlowfleetError) as failed:
            client.get_result_bytes("job", call=Call(max_response_bytes=1000))
        assert failed.value.code == "CLIENT_RESPONSE_TOO_LARGE" and failed.value.details["maxBytes"] == 1000
        assert client.get_result_bytes("job", call=Call(max_response_bytes=1000)) == b"y" * 10
    assert len(server.seen) == 2


def test_cancel_stops_a_wait_between_tries(server: ScriptedServer) -> None:
    server.script(Reply(503, REDIS_DOWN, headers={"retry-after": "30"}))
    cancel = threading.Event()
    with client_of(server, on_retry=lambda event: cancel.set()) as client:
        started = time.monotonic()
        with pytest.raises(FlowfleetError) as failed:
            client.health(call=Call(cancel=cancel))
    assert failed.value.code == "CLIENT_ABORTED" and time.monotonic() - started < 5


def test_backoff_doubles_to_its_cap_with_jitter_in_half_to_one() -> None:
    policy = RetryPolicy(base_delay_s=0.2, max_delay_s=2.0)
    assert [backoff_delay_s(policy, n, lambda: 1.0) for n in (1, 2, 3, 4, 5, 6)] == [
        0.2,
        0.4,
        0.8,
        1.6,
        2.0,
        2.0,
    ]
    assert [backoff_delay_s(policy, n, lambda: 0.0) for n in (1, 2, 5)] == [0.1, 0.2, 1.0]


def test_which_failures_are_retryable() -> None:
    for status in (408, 429, 502, 503, 504, 507):
        assert is_retryable_failure(status, True) and not is_retryable_failure(status, False)
    for status in (400, 404, 409, 413, 500, 501):
        assert not is_retryable_failure(status, True)
    assert is_retryable_failure("network", True) and not is_retryable_failure("network", False)
    assert is_retryable_failure("timeout", True) and not is_retryable_failure("timeout", False)
    assert is_retryable_failure("network", False, unsent=True)


def test_retry_after_parses_seconds_and_http_dates() -> None:
    now = 1_700_000_000.0
    assert parse_retry_after("3", now) == 3.0 and parse_retry_after(" 0 ", now) == 0.0
    assert parse_retry_after(formatdate(now + 5, usegmt=True), now) == 5.0
    assert parse_retry_after(formatdate(now - 5, usegmt=True), now) == 0.0
    for unreadable in (None, "-1", "soon", "1.5", "Xyz, nonsense"):
        assert parse_retry_after(unreadable, now) is None


@pytest.mark.parametrize(
    "make",
    [
        lambda: Client("ftp://example.invalid"),
        lambda: Client("not a url"),
        lambda: Client("http://127.0.0.1:1", token=""),
        lambda: Client("http://127.0.0.1:1", timeout_s=0),
        lambda: Client("http://127.0.0.1:1", retry={"attempts": 0}),
        lambda: Client("http://127.0.0.1:1", retry={"tries": 2}),
        lambda: RetryPolicy(attempts=1.5),
        lambda: RetryPolicy(base_delay_s=-1),
        lambda: RetryPolicy(deadline_s=math.inf),
    ],
)
def test_malformed_options_are_client_invalid_options(make: object) -> None:
    with pytest.raises(FlowfleetError) as refused:
        make()  # type: ignore[operator]
    assert refused.value.code == "CLIENT_INVALID_OPTIONS" and "option" in refused.value.details
