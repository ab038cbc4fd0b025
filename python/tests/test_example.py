"""examples/python/trainer.py, run as a user runs it, against the local fleet: what it prints
matches the coordinator's summary of the same job, and a refused token exits 1 with its code."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from fleet_support import REPO, Fleet
from flowfleet import Client

TRAINER = REPO / "examples" / "python" / "trainer.py"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(TRAINER), *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **(env or {})},
    )


def test_the_example_runs_a_rollout_and_prints_its_log_probs(fleet: Fleet) -> None:
    done = run("--url", fleet.url, "--token", fleet.tokens["trainer"], "--seeds", "3,5", "--steps", "3")
    assert done.returncode == 0, done.stderr
    assert re.search(r"completed step 3/3 on w[12]", done.stdout), done.stdout
    assert re.search(r"latents\s+float32 \[4, 2, \d+, 1, 8, 8\]", done.stdout), done.stdout
    assert "log_probs float64 [3, 2]" in done.stdout
    job = re.search(r"enqueued (\S+)", done.stdout)
    assert job is not None
    with Client(fleet.url, fleet.tokens["viewer"]) as viewer:
        summary = viewer.status(job.group(1))["summary"]
    for sample, seed in enumerate([3, 5]):
        printed = re.search(rf"seed {seed}: sum (-?\d+\.\d+)  per step ((?:-?\d+\.\d+ ?){{3}})", done.stdout)
        assert printed is not None, done.stdout
        row = [step[sample] for step in summary["logProbs"]]
        assert abs(float(printed.group(1)) - sum(row)) < 1e-5
        assert [float(v) for v in printed.group(2).split()] == [round(v, 6) for v in row]


def test_the_example_reads_url_and_token_from_the_environment_and_exits_1_when_refused(fleet: Fleet) -> None:
    refused = run(
        "--steps", "1", env={"FLOWFLEET_URL": fleet.url, "FLOWFLEET_TOKEN": "not-a-valid-token-at-all"}
    )
    assert refused.returncode == 1
    assert "error: API_UNAUTHORIZED" in refused.stderr
    usage = run("--steps", "many")
    assert usage.returncode == 2
