"""``npm run train`` (``flowfleet train``) end to end: it starts its own local fleet of two
workers, runs examples/flowgrpo/train.py against it with the fleet's URL and trainer token and
the flags it was given, and stops the fleet."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fleet_support import REPO, tsx_command
from flowgrpo_support import LOG_KEYS, read_log


def test_flowfleet_train_runs_the_example_on_a_local_fleet_and_stops_it(tmp_path: Path) -> None:
    log = tmp_path / "cli.jsonl"
    command = tsx_command(
        "apps/cli/src/main.ts", "train", "--python", sys.executable, "--iterations", "2",
        "--group", "2", "--steps", "2", "--log", str(log), "--plot", str(tmp_path / "cli.png"),
    )  # fmt: skip
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "flowfleet train: local fleet up" in done.stderr and "2 workers" in done.stderr
    records = read_log(log)
    assert [set(r) for r in records] == [LOG_KEYS, LOG_KEYS]
    # A fleet of its own: the first versions it ever synced.
    assert [r["weights_version"] for r in records] == [1, 2]
    assert "iter   1 v2:" in done.stdout
