"""The coded error the torch extra raises (codes as the TS packages name them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class Wan21Error(ValueError):
    """A refused config, input or weight set: ``code`` is the fleet's error code for the same
    refusal (``MODEL_CONFIG_INVALID``, ``MODEL_INPUT_INVALID``, ``MODEL_WEIGHTS_MISMATCH``) and
    ``details`` names what was wrong."""

    def __init__(self, code: str, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.details: dict[str, Any] = dict(details or {})
