"""FlowGRPO on pixels, end to end (issue 20 item 5): examples/flowgrpo/train.py, run as a user
runs it, against a real fleet whose workers serve ``wan21-mini-vae`` (the wan21-mini DiT and
text encoder plus a small Wan2.1-structured VAE decoder: the reduced config of the same
architecture). Each rollout (two latent frames, so a clip of 1 + 4 = 5 frames) is sampled and
then decoded on its worker, which returns every 4th frame of every sample (frames 0 and 4,
RolloutFile v2) and only the latents of the trained steps; the trainer scores the frames with
DDPO's ``jpeg-compressibility``, recomputes the trained steps' log-probs with gradients and
pushes the update.

Asserted: every iteration's ratio_err_max ≤ 1e-5 (the fleet's log-probs against the trainer's
recompute, through a kept window); the files hold what was asked (v2, frames 0 and 4, the
window) and the logged reward is the reward of those very frames; the reward rises by at least
``MARGIN``. Why this reward: at wan21-mini-vae's random decoder weights the JPEG size of a frame
answers strongly to what the DiT controls (a unit shift of one latent channel's mean moves it by
up to 0.6 kB, ~9× the spread between samples), so a dozen iterations show it; ``pixel-color``
moves ~3× less per unit against its spread, too slow for CI (the example's README). Seeded
throughout, so the run repeats. ``FLOWGRPO_TEST_ARGS`` appends trainer flags:
``FLOWGRPO_TEST_ARGS="--lr 0"`` (AdamW then leaves the weights as they are) shows the test
failing on the margin.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from pixel_rewards import jpeg_compressibility

from fleet_support import Fleet, running_fleet
from flowfleet import read_rollout_file
from flowgrpo_support import LOG_KEYS, read_log, run_trainer

PROMPTS = ["a cat", "a dog"]
ITERATIONS = 12
GROUP = 8
STEPS = 4
#: Latent frames per sample: the VAE decodes them to 1 + 4·(2 − 1) = 5 frames.
LATENT_FRAMES = 2
CLIP_FRAMES = 5
#: The trained steps: the first half (``--timestep-fraction 0.5``), so the files keep x_0 … x_2
#: and x_T (the final latents the VAE decoded).
TRAINED = 2
#: Mean reward (−kB) of the last three iterations − mean of the first three, at least.
MARGIN = 0.2
RATIO_ERR_BOUND = 1e-5


@pytest.fixture(scope="module")
def pixel_fleet() -> Iterator[Fleet]:
    """Two workers that load only the wan21-mini-vae card (FLOWFLEET_MODELS)."""
    with running_fleet(workers=2, env={"FLOWFLEET_MODELS": "wan21-mini-vae"}) as started:
        yield started


def test_flowgrpo_on_the_workers_decoded_frames_matches_log_probs_and_raises_the_pixel_reward(
    pixel_fleet: Fleet, tmp_path: Path
) -> None:
    log, rollouts = tmp_path / "pixels.jsonl", tmp_path / "rollouts"
    prompts = [arg for p in PROMPTS for arg in ("--prompt", p)]
    extra = shlex.split(os.environ.get("FLOWGRPO_TEST_ARGS", ""))
    done = run_trainer(
        "--url", pixel_fleet.url, "--token", pixel_fleet.tokens["trainer"], *prompts,
        "--reward", "jpeg-compressibility", "--reward-frames", "every-4", "--frames", str(LATENT_FRAMES),
        "--iterations", str(ITERATIONS), "--group", str(GROUP), "--steps", str(STEPS),
        "--timestep-fraction", str(TRAINED / STEPS), "--seed", "0", "--log", str(log),
        "--save-rollouts", str(rollouts), "--plot", str(tmp_path / "reward.png"), "--torch-threads", "1",
        *extra,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    records = read_log(log)
    print("\n" + "\n".join(line for line in done.stdout.splitlines() if line.startswith("iter")))

    assert [r["iteration"] for r in records] == list(range(ITERATIONS))
    for r in records:
        assert set(r) == LOG_KEYS
        assert r["reward"] == "jpeg-compressibility" and r["prompts"] == PROMPTS
        request = r["request"]
        assert request["model"] == "wan21-mini-vae"
        assert request["decodeFrames"] == {"every": 4}
        assert request["keepLatents"] == {"fromStep": 0, "steps": TRAINED}

    errors = [r["ratio_err_max"] for r in records]
    assert max(errors) <= RATIO_ERR_BOUND, errors
    assert min(errors) > 0  # measured, not skipped: ORT and torch differ in the last bits

    # What the workers returned, and that the trainer scored exactly those frames.
    for n, r in enumerate(records):
        files = sorted(rollouts.glob(f"iter-{n:04d}-p*.safetensors"))
        assert len(files) == len(PROMPTS)
        scores = []
        for f, prompt in zip(files, PROMPTS, strict=True):
            rollout = read_rollout_file(f.read_bytes())
            assert rollout.format_version == "2"
            assert rollout.metadata["weightsVersions"]["dit"] == r["weights_version"]
            assert rollout.latent_steps.tolist() == [*range(TRAINED + 1), STEPS]
            assert rollout.video == {"frames": CLIP_FRAMES, "height": 64, "width": 64}
            assert rollout.frame_indices is not None and rollout.frame_indices.tolist() == [0, 4]
            assert rollout.frames is not None and rollout.frames.dtype == np.uint8
            # An 8×8 latent decodes to 64×64 frames (the VAE's 8× upsampling).
            assert rollout.frames.shape == (GROUP, 2, 64, 64, 3)
            scores.append(jpeg_compressibility(rollout.frames, [prompt] * GROUP))
        assert float(np.concatenate(scores).mean()) == pytest.approx(r["reward_mean"], rel=1e-12)

    means = [r["reward_mean"] for r in records]
    gain = float(np.mean(means[-3:]) - np.mean(means[:3]))
    assert gain >= MARGIN, f"reward gain {gain:+.4f} < {MARGIN} (means {np.round(means, 4).tolist()})"
