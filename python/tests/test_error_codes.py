"""Every code the SDK raises is one of the registry's (docs/errors.md, generated from
packages/errors/src/codes.ts): the Python client invents none."""

from __future__ import annotations

import re

from fleet_support import REPO
from flowfleet import CLIENT_CODES

SOURCES = REPO / "python" / "src" / "flowfleet"


def registry() -> set[str]:
    table = (REPO / "docs" / "errors.md").read_text()
    return set(re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|", table, flags=re.MULTILINE))


def test_every_code_the_sdk_raises_is_in_the_registry() -> None:
    codes = registry()
    assert len(codes) > 50
    assert CLIENT_CODES <= codes, CLIENT_CODES - codes
    raised: set[str] = set()  # every quoted code-shaped string but the constant's own name
    for path in SOURCES.glob("*.py"):  # flowfleet.torch has its own tests
        raised |= set(
            re.findall(r'"((?:CLIENT|FMT|API|COORD|MODEL|PROTO)_[A-Z0-9_]+)"', path.read_text())
        ) - {"CLIENT_CODES"}
    assert raised and raised <= codes, raised - codes
    assert {c for c in raised if c.startswith(("CLIENT_", "FMT_"))} <= CLIENT_CODES
