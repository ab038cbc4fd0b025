"""What the fixtures and tests share: a real local fleet (redis-server, the coordinator and two
workers as child processes, started by the repository's own ``flowfleet up --json``), and how to
start and stop it."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from flowfleet import Client

REPO = Path(__file__).resolve().parents[2]
VECTORS = REPO / "docs" / "formats" / "vectors" / "rollout-file-v1"
VECTORS_V2 = REPO / "docs" / "formats" / "vectors" / "rollout-file-v2"
#: How long the fleet may take to come up (redis, coordinator, workers live), and to stop.
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 40.0
#: The small rollout every fleet test runs (wan21-mini, one latent frame of 8×8).
SMALL = {"model": "wan21-mini", "steps": 2, "shape": {"frames": 1, "height": 8, "width": 8}}


@dataclass(frozen=True)
class Fleet:
    url: str
    tokens: dict[str, str]
    workers: list[str]
    ready: dict[str, Any]

    def client(self, role: str = "trainer", **options: Any) -> Client:
        return Client(self.url, self.tokens[role], **options)


def tsx_command(*args: str) -> list[str]:
    node = shutil.which("node")
    missing = [
        name
        for name, present in (
            ("node (Node 20: https://nodejs.org, or apt-get install nodejs)", node is not None),
            ("redis-server (apt-get install redis-server)", shutil.which("redis-server") is not None),
            ("node_modules (npm ci at the repository root)", (REPO / "node_modules" / "tsx").is_dir()),
        )
        if not present
    ]
    if missing:
        pytest.fail(f"the fleet tests need {'; '.join(missing)}", pytrace=False)
    assert node is not None
    return [node, "--import", "tsx", "--conditions=@flowfleet/source", *args]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_fleet(cli: subprocess.Popen[str], ready: dict[str, Any] | None) -> None:
    """SIGTERM the CLI (it stops workers, coordinator, Redis in order); SIGKILL what is left."""
    if cli.poll() is None:
        cli.send_signal(signal.SIGTERM)
        try:
            cli.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            cli.kill()
            cli.wait()
    if ready is None:
        return
    # The children run in their own process groups: kill any the CLI could not stop.
    pids = [w["pid"] for w in ready.get("workers", [])]
    pids += [ready.get("coordinator", {}).get("pid"), ready.get("redis", {}).get("pid")]
    for pid in pids:
        if isinstance(pid, int) and _alive(pid):
            os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def running_fleet(workers: int, env: Mapping[str, str] | None = None) -> Iterator[Fleet]:
    """``flowfleet up --json --workers N`` (its children inherit ``env`` on top of this process's
    environment, e.g. ``FLOWFLEET_MODELS``), yielded once it reports ready; all of it is stopped on
    exit. Fails the test with the CLI's output when it is not ready within ``START_TIMEOUT_S``."""
    up = ["up", "--json", "--workers", str(workers), "--log-level", "warn"]
    command = tsx_command("apps/cli/src/main.ts", *up)
    log = tempfile.TemporaryFile(mode="w+")
    cli = subprocess.Popen(
        command,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=log,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **(env or {})},
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
