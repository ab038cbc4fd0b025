"""The coordinator HTTP transport over httpx: bearer auth, a timeout per try, the retry policy of
:mod:`flowfleet.retry`, and every failure mapped onto a coded error (the TypeScript SDK's
``HttpTransport``): a server envelope → its own code; another error status → ``CLIENT_HTTP_ERROR``;
no connection → ``CLIENT_UNREACHABLE``; ``CLIENT_TIMEOUT``, ``CLIENT_RESPONSE_TOO_LARGE``,
``CLIENT_ABORTED``.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from ._schema import Check, validate
from .errors import FlowfleetError
from .retry import (
    Answered,
    FailedTry,
    RetryOption,
    RetryPolicy,
    is_retryable_failure,
    parse_retry_after,
    resolve_retry,
    run_with_retry,
)

_CODE = re.compile(r"^[A-Z]+_[A-Z0-9_]+$")
_PREVIEW_CHARS = 2_000


@dataclass(frozen=True)
class Call:
    """Per-call options every client method takes (``call=Call(...)``).

    ``timeout_s`` bounds each try (connect, send, and the whole answer); ``retry`` is laid over
    the client's (False: one try); an answer past ``max_response_bytes`` is refused
    (``CLIENT_RESPONSE_TOO_LARGE``); setting ``cancel`` stops a wait between tries and any poll
    (``CLIENT_ABORTED``).
    """

    timeout_s: float | None = None
    retry: RetryOption = None
    max_response_bytes: int | None = None
    cancel: threading.Event | None = None


@dataclass(frozen=True)
class RetryEvent:
    """What ``on_retry`` is told before each wait."""

    method: str
    path: str
    #: The try that failed (1 = the first).
    attempt: int
    delay_s: float
    error: FlowfleetError


#: The largest piece of a request body handed to the socket at once. httpcore sends a body by
#: slicing off what the socket took and re-sending the rest (``buffer = buffer[n:]``), a copy of
#: the remainder per ``send``: a 2 GB body in one piece went at ~1 MB/s, quadratic in its size.
BODY_CHUNK_BYTES = 1 << 20


@dataclass(frozen=True)
class StreamedBody:
    """A request body read in pieces, afresh on every try (a file on disk, say): ``size`` bytes,
    which ``chunks()`` yields."""

    size: int
    chunks: Callable[[], Iterator[bytes]]


def _pieces(data: bytes) -> Iterator[bytes]:
    view = memoryview(data)
    for start in range(0, len(view), BODY_CHUNK_BYTES):
        yield bytes(view[start : start + BODY_CHUNK_BYTES])


@dataclass(frozen=True)
class Answer:
    status: int
    headers: httpx.Headers
    body: bytes


class _TooLarge(Exception):
    pass


class _BodyTimeout(Exception):
    pass


def _describe(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return text


class HttpTransport:
    """Sends requests to one coordinator; thread-safe (one httpx connection pool)."""

    def __init__(
        self,
        base_url: str,
        token: str | None,
        timeout_s: float,
        retry: RetryPolicy,
        on_retry: Callable[[RetryEvent], None] | None,
        http: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url
        self._token = token
        self._timeout_s = timeout_s
        self._retry = retry
        self._on_retry = on_retry
        self._client = httpx.Client(base_url=base_url, transport=http, follow_redirects=False)
        self._closed = False

    def close(self) -> None:
        """Closes the connections. Idempotent."""
        if not self._closed:
            self._closed = True
            self._client.close()

    # The three answer kinds.

    def request_json(
        self,
        method: str,
        path: str,
        check: Check,
        *,
        idempotent: bool,
        json_body: Any = None,
        content: bytes | StreamedBody | None = None,
        headers: Mapping[str, str] | None = None,
        call: Call | None = None,
    ) -> Any:
        """Sends the request and answers its JSON, checked with ``check``.

        :raises FlowfleetError: the server's code, ``CLIENT_HTTP_ERROR``, ``CLIENT_BAD_RESPONSE``,
            ``CLIENT_UNREACHABLE``, ``CLIENT_TIMEOUT``, ``CLIENT_ABORTED``,
            ``CLIENT_RESPONSE_TOO_LARGE``, ``CLIENT_INVALID_OPTIONS``
        """
        answer = self.send(
            method,
            path,
            idempotent=idempotent,
            json_body=json_body,
            content=content,
            headers=headers,
            call=call,
        )
        what = f"response to {method} {path}"
        try:
            value = json.loads(answer.body.decode("utf-8"))
        except ValueError as cause:
            raise FlowfleetError(
                "CLIENT_BAD_RESPONSE",
                f"{method} {path} answered {answer.status} with a body that is not JSON",
                {**self._where(method, path), "status": answer.status, "body": _preview(answer.body)},
                cause=cause,
            ) from cause
        return validate(value, check, what)

    def read_bytes(self, method: str, path: str, *, call: Call | None = None) -> bytes:
        """Sends an idempotent read and answers the body. :raises FlowfleetError: as :meth:`json`"""
        return self.send(method, path, idempotent=True, call=call).body

    def read_text(self, method: str, path: str, *, call: Call | None = None) -> str:
        """Sends an idempotent read and answers the body as text. :raises FlowfleetError: as :meth:`json`"""
        return self.read_bytes(method, path, call=call).decode("utf-8", "replace")

    def send(
        self,
        method: str,
        path: str,
        *,
        idempotent: bool,
        json_body: Any = None,
        content: bytes | StreamedBody | None = None,
        headers: Mapping[str, str] | None = None,
        call: Call | None = None,
    ) -> Answer:
        """Sends with the retry policy and answers a 2xx. :raises FlowfleetError: as :meth:`json`"""
        call = call or Call()
        policy = resolve_retry(call.retry, self._retry)
        timeout_s = self._timeout_s if call.timeout_s is None else call.timeout_s
        request_headers = dict(headers or {})
        if self._token is not None:
            request_headers["authorization"] = f"Bearer {self._token}"
        body: bytes | StreamedBody | None = None
        if json_body is not None:
            request_headers["content-type"] = "application/json"
            body = json.dumps(json_body, separators=(",", ":"), allow_nan=False).encode("utf-8")
        elif content is not None:
            request_headers["content-type"] = "application/octet-stream"
            body = content
        on_retry = self._on_retry

        def try_once() -> Answered | FailedTry:
            return self._attempt(method, path, request_headers, body, idempotent, timeout_s, call)

        def retried(attempt: int, delay_s: float, error: FlowfleetError) -> None:
            if on_retry is not None:
                on_retry(RetryEvent(method, path, attempt, delay_s, error))

        answer = run_with_retry(
            try_once, policy, what=f"{method} {path}", cancel=call.cancel, on_retry=retried
        )
        assert isinstance(answer, Answer)
        return answer

    def _attempt(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        body: bytes | StreamedBody | None,
        idempotent: bool,
        timeout_s: float,
        call: Call,
    ) -> Answered | FailedTry:
        what = f"{method} {path}"
        started = time.monotonic()
        try:
            content: bytes | Iterator[bytes] | None = body if not isinstance(body, StreamedBody) else None
            if isinstance(body, StreamedBody) or (isinstance(body, bytes) and len(body) > BODY_CHUNK_BYTES):
                # Sent piecewise, with its length (not chunked transfer encoding).
                size = body.size if isinstance(body, StreamedBody) else len(body)
                content = body.chunks() if isinstance(body, StreamedBody) else _pieces(body)
                headers = {**headers, "content-length": str(size)}
            request = self._client.build_request(
                method, path, headers=headers, content=content, timeout=httpx.Timeout(timeout_s)
            )
            response = self._client.send(request, stream=True)
            try:
                data = self._read_body(response, started, timeout_s, call.max_response_bytes)
            finally:
                response.close()
        except _TooLarge as too_large:
            raise FlowfleetError(
                "CLIENT_RESPONSE_TOO_LARGE",
                f"{what}: {too_large}",
                {**self._where(method, path), "maxBytes": call.max_response_bytes},
            ) from None
        except (httpx.TimeoutException, _BodyTimeout) as cause:
            error = FlowfleetError(
                "CLIENT_TIMEOUT",
                f"{what}: no answer within {timeout_s * 1000:g} ms",
                {**self._where(method, path), "what": "request", "timeoutMs": timeout_s * 1000},
                cause=cause,
            )
            return FailedTry(error, is_retryable_failure("timeout", idempotent))
        except httpx.TransportError as cause:
            # A refused connection or an unresolved name never left: any request may go again.
            unsent = isinstance(cause, httpx.ConnectError)
            error = FlowfleetError(
                "CLIENT_UNREACHABLE",
                f"{what}: the coordinator at {self.base_url} is unreachable ({_describe(cause)})",
                self._where(method, path),
                cause=cause,
            )
            return FailedTry(error, is_retryable_failure("network", idempotent, unsent))
        answer = Answer(response.status_code, response.headers, data)
        if not 200 <= answer.status <= 299:
            return FailedTry(
                self._http_error(method, path, answer),
                is_retryable_failure(answer.status, idempotent),
                parse_retry_after(answer.headers.get("retry-after")),
            )
        return Answered(answer)

    def _read_body(
        self, response: httpx.Response, started: float, timeout_s: float, max_bytes: int | None
    ) -> bytes:
        if max_bytes is not None:
            declared = response.headers.get("content-length")
            if declared is not None and declared.isdigit() and int(declared) > max_bytes:
                raise _TooLarge(f"the answer declares {declared} bytes, more than {max_bytes}")
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if max_bytes is not None and size > max_bytes:
                raise _TooLarge(f"the answer passed {max_bytes} bytes")
            if time.monotonic() - started > timeout_s:
                raise _BodyTimeout()
            chunks.append(chunk)
        return b"".join(chunks)

    def _http_error(self, method: str, path: str, answer: Answer) -> FlowfleetError:
        try:
            value = json.loads(answer.body.decode("utf-8"))
        except ValueError:
            value = None
        envelope = (
            isinstance(value, dict)
            and isinstance(value.get("code"), str)
            and isinstance(value.get("message"), str)
        )
        if envelope and _CODE.match(value["code"]):
            details = value.get("details")
            return FlowfleetError(
                value["code"], value["message"], details if isinstance(details, dict) else {}
            )
        what = f"{method} {path}"
        extra: dict[str, Any] = {"envelope": value} if envelope else {"body": _preview(answer.body)}
        reason = httpx.codes.get_reason_phrase(answer.status)
        return FlowfleetError(
            "CLIENT_HTTP_ERROR",
            f"{what} answered {answer.status} {value['code']}: {value['message']}"
            if envelope
            else f"{what} answered {answer.status} {reason}".rstrip(),
            {**self._where(method, path), "status": answer.status, **extra},
        )

    def _where(self, method: str, path: str) -> dict[str, str]:
        return {"method": method, "url": f"{self.base_url}{path}"}


def _preview(body: bytes) -> str:
    text = body.decode("utf-8", "replace")
    return text if len(text) <= _PREVIEW_CHARS else f"{text[:_PREVIEW_CHARS]}…"
