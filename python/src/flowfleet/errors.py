"""The one exception type of the SDK: a coded error, as flowfleet's TypeScript packages raise it.

Every code is one of docs/errors.md (the registry is packages/errors/src/codes.ts): the server's
own codes pass through from its ``{code, message, details}`` envelope; the client's are the
``CLIENT_*`` codes the TypeScript SDK raises, and the formats codes for a malformed file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The codes this package raises itself (the server's pass through as they are).
CLIENT_CODES: frozenset[str] = frozenset(
    {
        "CLIENT_INVALID_OPTIONS",
        "CLIENT_UNREACHABLE",
        "CLIENT_TIMEOUT",
        "CLIENT_ABORTED",
        "CLIENT_RESPONSE_TOO_LARGE",
        "CLIENT_HTTP_ERROR",
        "CLIENT_BAD_RESPONSE",
        "CLIENT_BLOB_MISMATCH",
        "CLIENT_JOB_FAILED",
        "CLIENT_SYNC_FAILED",
        "CLIENT_UNKNOWN_VERSION",
        "FMT_SAFETENSORS_INVALID",
        "FMT_ROLLOUT_INVALID",
        "FMT_INVALID_ARGUMENT",
        "FMT_FILE_IO",
        "FMT_CHECKPOINT_INVALID",
    }
)


class FlowfleetError(Exception):
    """A coded failure: ``code`` (e.g. ``API_NO_CAPACITY``), ``message``, ``details``.

    ``details`` is the server's envelope details for a server error, or the client's facts (for
    ``FMT_*`` errors ``details["reason"]`` is the spec's stable reason id). The underlying
    exception, when there is one, is ``__cause__``.
    """

    code: str
    message: str
    details: dict[str, Any]

    def __init__(
        self,
        code: str,
        message: str,
        details: Mapping[str, Any] | None = None,
        *,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = dict(details or {})
        if cause is not None:
            self.__cause__ = cause

    @property
    def reason(self) -> str | None:
        """``details["reason"]`` when it is a string (the FMT_* refusals carry one)."""
        value = self.details.get("reason")
        return value if isinstance(value, str) else None

    def __repr__(self) -> str:
        return f"FlowfleetError({self.code!r}, {self.message!r}, {self.details!r})"


def invalid_option(message: str, option: str) -> FlowfleetError:
    """``CLIENT_INVALID_OPTIONS`` naming the option (nothing was sent)."""
    return FlowfleetError("CLIENT_INVALID_OPTIONS", message, {"option": option})
