"""A short FlowGRPO training (examples/flowgrpo/train.py, run as a user runs it) against the
session's fleet of two workers, with fixed seeds: the trainer's recompute of every trajectory
matches the fleet's log-probs (every iteration's ratio_err_max ≤ 1e-5), every rollout after a
sync ran on the version just pushed (read from the result files themselves), and the reward goes
up by at least ``MARGIN``.

Robustness: everything is seeded (torch init, the rollouts' seeds), so the run repeats; with the
settings below the mean reward of the last three iterations is ≈ 0.13 above that of the first
three, while without the optimiser step (``--lr 0``: AdamW then leaves the weights unchanged)
it moves by only the seeds' noise (< 0.02). ``FLOWGRPO_TEST_ARGS`` appends flags to the
trainer's command line: ``FLOWGRPO_TEST_ARGS="--lr 0"`` shows the test failing.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import numpy as np

from fleet_support import Fleet
from flowfleet import Client, read_rollout_file
from flowgrpo_support import LOG_KEYS, read_log, run_trainer

ITERATIONS = 10
PROMPTS = 4
GROUP = 8
#: The reward gain the test asks for: mean of the last three iterations − mean of the first three.
MARGIN = 0.05
RATIO_ERR_BOUND = 1e-5


def test_a_short_training_matches_the_fleet_log_probs_stays_on_policy_and_raises_the_reward(
    fleet: Fleet, tmp_path: Path
) -> None:
    log, rollouts = tmp_path / "train.jsonl", tmp_path / "rollouts"
    extra = shlex.split(os.environ.get("FLOWGRPO_TEST_ARGS", ""))
    done = run_trainer(
        "--url", fleet.url, "--token", fleet.tokens["trainer"],
        "--iterations", str(ITERATIONS), "--group", str(GROUP), "--steps", "6", "--seed", "0",
        "--log", str(log), "--save-rollouts", str(rollouts), "--plot", str(tmp_path / "reward.png"),
        "--torch-threads", "1", *extra,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    records = read_log(log)
    print("\n" + "\n".join(line for line in done.stdout.splitlines() if line.startswith("iter")))

    assert [r["iteration"] for r in records] == list(range(ITERATIONS))
    for r in records:
        assert set(r) == LOG_KEYS
        assert r["reward"] == "color" and r["group_size"] == GROUP and len(r["prompts"]) == PROMPTS
        assert r["request"]["weights"]["dit"] == {"exact": r["weights_version"]}
        assert {"prompt", "seeds"}.isdisjoint(r["request"])

    # The trainer's recompute of each trajectory against the fleet's log-probs.
    errors = [r["ratio_err_max"] for r in records]
    assert max(errors) <= RATIO_ERR_BOUND, errors
    assert min(errors) > 0  # measured, not skipped: ORT and torch differ in the last bits

    # Every rollout after a sync ran on the new version, as its result file records it.
    with Client(fleet.url, fleet.tokens["viewer"]) as viewer:
        versions = viewer.weights("dit")["versions"]
    for n, r in enumerate(records):
        files = sorted(rollouts.glob(f"iter-{n:04d}-p*.safetensors"))
        assert len(files) == PROMPTS
        ran = {read_rollout_file(f.read_bytes()).metadata["weightsVersions"]["dit"] for f in files}
        assert ran == {r["weights_version"]}
        if n > 0:
            assert r["weights_version"] == records[n - 1]["weights_version"] + 1
        # Loaded by the workers (a version the fleet has since moved past is "retired").
        assert versions[str(r["weights_version"])]["status"] in ("loaded", "retired")
    # The version the last update pushed is the one the fleet serves.
    assert versions[str(records[-1]["weights_version"] + 1)]["status"] == "loaded"

    means = [r["reward_mean"] for r in records]
    gain = float(np.mean(means[-3:]) - np.mean(means[:3]))
    assert gain >= MARGIN, f"reward gain {gain:+.4f} < {MARGIN} (means {np.round(means, 4).tolist()})"


def test_with_max_staleness_the_next_batch_overlaps_training_and_the_ratio_is_still_exact(
    fleet: Fleet, tmp_path: Path
) -> None:
    """``--max-staleness 1``: each batch after the first is enqueued before the update, so it runs
    on the version before the one that trains on it; the recompute uses that version's weights."""
    log, rollouts = tmp_path / "stale.jsonl", tmp_path / "rollouts"
    done = run_trainer(
        "--url", fleet.url, "--token", fleet.tokens["trainer"], "--iterations", "3", "--group", "4",
        "--steps", "4", "--max-staleness", "1", "--log", str(log), "--save-rollouts", str(rollouts),
        "--plot", str(tmp_path / "reward.png"),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    records = read_log(log)
    assert [r["request"]["weights"]["dit"] for r in records] == [{"maxStaleness": 1}] * 3
    assert max(r["ratio_err_max"] for r in records) <= RATIO_ERR_BOUND
    first = records[0]["weights_version"]
    stale = 0
    for n, r in enumerate(records):
        held = first + n  # the trainer's version while it trained on batch n
        files = sorted(rollouts.glob(f"iter-{n:04d}-p*.safetensors"))
        ran = [read_rollout_file(f.read_bytes()).metadata["weightsVersions"]["dit"] for f in files]
        # Batch n + 1 is enqueued while the trainer holds first + n: it runs on that version (or on
        # the next, if a worker only starts it after the push), never older than the fence.
        assert set(ran) <= ({held} if n == 0 else {held - 1, held}), (n, ran)
        assert r["weights_version"] == min(ran)
        stale += sum(v < held for v in ran)
    assert stale > 0  # the overlap happened: some batch trained one version after it was sampled


def test_a_refused_token_exits_1_with_the_code(fleet: Fleet, tmp_path: Path) -> None:
    done = run_trainer(
        "--url", fleet.url, "--token", "not-a-trainer-token", "--log", str(tmp_path / "x.jsonl")
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith("train.py: API_UNAUTHORIZED: ")
