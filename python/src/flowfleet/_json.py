"""Strict JSON for the formats: duplicate keys detected, NaN/Infinity refused (spec § 10)."""

from __future__ import annotations

import json
import math
from typing import Any

#: 2^53 − 1: the largest integer every JSON reader carries exactly.
MAX_SAFE_INTEGER = 2**53 - 1


class DuplicateKeyError(ValueError):
    """An object in the text has the same key twice (after unescaping)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key {key!r} appears twice")
        self.key = key


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads_strict(text: str) -> Any:
    """Parses ``text`` as JSON with JavaScript's grammar (no NaN/Infinity literals).

    Raises ``ValueError`` when it is not JSON, and then ``DuplicateKeyError`` when it is JSON but
    some object repeats a key (so a text that is both cut short and repetitive is "not JSON", as
    the TypeScript reader decides).
    """
    duplicates: list[str] = []

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out and not duplicates:
                duplicates.append(key)
            out[key] = value
        return out

    value = json.loads(text, object_pairs_hook=pairs_hook, parse_constant=_refuse_constant)
    if duplicates:
        raise DuplicateKeyError(duplicates[0])
    return value


def is_number(value: object) -> bool:
    """A finite JSON number (``bool`` is not one)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int past binary64's range reads as Infinity in JavaScript
        return False


def is_integer(value: object, minimum: int = 0, maximum: int = MAX_SAFE_INTEGER) -> bool:
    """An integer-valued JSON number in [minimum, maximum] (``2.0`` counts, ``True`` does not)."""
    if not is_number(value):
        return False
    assert isinstance(value, (int, float))
    if isinstance(value, float) and not value.is_integer():
        return False
    return minimum <= value <= maximum
