"""Fixtures: a real local fleet for the session (see fleet_support.py), clients of it, and the
weights its workers start from."""

from __future__ import annotations

import json
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from typing import Any

import pytest

import flowgrpo_support  # noqa: F401 - examples/flowgrpo on sys.path, whichever test file runs first
from fleet_support import REPO, START_TIMEOUT_S, Fleet, stop_fleet, tsx_command
from flowfleet import Client


@pytest.fixture(scope="session")
def fleet() -> Iterator[Fleet]:
    """A local fleet of two workers for the whole session, stopped (all of it) at the end."""
    command = tsx_command("apps/cli/src/main.ts", "up", "--json", "--workers", "2", "--log-level", "warn")
    log = tempfile.TemporaryFile(mode="w+")
    cli = subprocess.Popen(
        command, cwd=REPO, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL, text=True
    )
    assert cli.stdout is not None
    lines: list[str] = []
    got_ready = threading.Event()

    def read() -> None:
        assert cli.stdout is not None
        for line in cli.stdout:
            lines.append(line)
            if '"event":"ready"' in line:
                got_ready.set()
        got_ready.set()  # stdout closed: the CLI exited

    threading.Thread(target=read, daemon=True).start()
    ready: dict[str, Any] | None = None
    try:
        got_ready.wait(START_TIMEOUT_S)
        for line in lines:
            if '"event":"ready"' in line:
                ready = json.loads(line)
        if ready is None:
            log.seek(0)
            output = log.read()[-4000:]
            pytest.fail(
                f"flowfleet up did not report ready within {START_TIMEOUT_S:g} s "
                f"(exit {cli.poll()}):\n{''.join(lines)}{output}",
                pytrace=False,
            )
        yield Fleet(ready["url"], ready["tokens"], [w["id"] for w in ready["workers"]], ready)
    finally:
        stop_fleet(cli, ready)
        log.close()


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
