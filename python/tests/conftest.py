"""Fixtures: a real local fleet for the session (see fleet_support.py), clients of it, and the
weights its workers start from."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

import flowgrpo_support  # noqa: F401 - examples/flowgrpo on sys.path, whichever test file runs first
from fleet_support import REPO, Fleet, running_fleet, tsx_command
from flowfleet import Client


@pytest.fixture(scope="session")
def fleet() -> Iterator[Fleet]:
    """A local fleet of two workers for the whole session, stopped (all of it) at the end."""
    with running_fleet(workers=2) as started:
        yield started


@pytest.fixture()
def trainer(fleet: Fleet) -> Iterator[Client]:
    with fleet.client("trainer") as client:
        yield client


@pytest.fixture(scope="session")
def initial_dit_weights(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The dit weights a wan21-mini worker starts from, written by the models package itself
    (``initWeights`` → ``encodeWeights``): the names and shapes the fleet takes."""
    out = tmp_path_factory.mktemp("weights") / "dit.safetensors"
    script = (
        "import { writeFileSync } from 'node:fs';"
        "import { encodeWeights } from '@flowfleet/models';"
        "import { initWeights, wan21MiniCard } from '@flowfleet/models/wan21';"
        "writeFileSync(process.argv[1], encodeWeights(initWeights(wan21MiniCard.config, 0, 'dit')));"
    )
    command = tsx_command("--input-type=module", "-e", script, str(out))
    run = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return out.read_bytes()
