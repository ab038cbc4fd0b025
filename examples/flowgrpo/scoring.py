"""One iteration's rewards: what each group's reward scores (its final latents, or the frame
subset the worker decoded), the scores, and the reward's per-prompt probe."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from flowfleet import RolloutFile

from frame_subset import FrameSubset
from rewards import Reward


@dataclass(frozen=True)
class Scores:
    #: One [G] float64 array per group.
    rewards: list[np.ndarray]
    #: The probe's group mean per prompt (empty when the reward has no probe).
    probe: dict[str, list[float]]


def reward_input(rollout: RolloutFile, reward: Reward, subset: FrameSubset) -> np.ndarray:
    """What ``reward`` scores in ``rollout``: its final latents [G, C, F, H, W] float32, or the
    frames of ``subset`` [G, N, H, W, 3] uint8.

    :raises ValueError: when a frames reward meets a file without those frames
    """
    if reward.input == "latents":
        return np.array(rollout.final_latents)
    if rollout.frames is None or rollout.frame_indices is None or rollout.video is None:
        raise ValueError(
            f"reward {reward.name!r} scores frames, and this result file holds none (RolloutFile v2's "
            "frames come back when the request asks for them)"
        )
    return subset.select(rollout.frames, rollout.frame_indices, rollout.video["frames"])


def score_groups(
    reward: Reward, rollouts: Sequence[RolloutFile], prompts: Sequence[str], subset: FrameSubset
) -> Scores:
    """Scores every group (one rollout file per prompt) with ``reward``."""
    inputs = [reward_input(r, reward, subset) for r in rollouts]
    rewards = [reward(x, [p] * r.group) for x, r, p in zip(inputs, rollouts, prompts, strict=True)]
    probe: dict[str, list[float]] = {}
    if reward.probe is not None:
        fn = reward.probe[1]
        probe = {p: fn(x).mean(axis=0).round(4).tolist() for x, p in zip(inputs, prompts, strict=True)}
    return Scores(rewards, probe)
