"""The trained transitions of one iteration, flattened into rows from the fleet's result files.

A row is one (group, step, sample): x_i and x_{i+1} of that sample, the step's timestep and SDE
schedule, the group's prompt, the log-prob the fleet recorded for the transition and the sample's
advantage. Every row of an iteration shares the CFG settings its files record (guidance scale,
``cfgRule``, negative prompt), which the recompute must use as the fleet did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from flowfleet import RolloutFile
from flowfleet.torch import Wan21Config, tokenize

from sde import StepSchedule


@dataclass(frozen=True)
class Guidance:
    """How the fleet ran CFG for these rows (from the files' records)."""

    scale: float
    rule: str
    negative_prompt: str


@dataclass(frozen=True)
class Transitions:
    x: torch.Tensor  # [R, C, F, H, W] float32: x_i
    x_next: torch.Tensor  # [R, C, F, H, W] float32: x_{i+1}
    timestep: torch.Tensor  # [R] float64: the timestep the fleet's forward was given
    schedule: StepSchedule  # [R] σ_i, σ_{i+1}, std_dev_t
    prompt_ids: torch.Tensor  # [R, L] int64
    #: Each row's prompt: its index in the prompts build_transitions was given (else its group's).
    prompt_index: torch.Tensor  # [R] int64
    old_log_prob: torch.Tensor  # [R] float64: the fleet's log-prob
    advantage: torch.Tensor  # [R] float64
    #: Index of each row's (group, sample) in the iteration's samples, and its dit version.
    sample: torch.Tensor  # [R] int64
    version: torch.Tensor  # [R] int64
    guidance: Guidance

    def __len__(self) -> int:
        return int(self.x.shape[0])

    def rows(self, index: torch.Tensor | slice) -> Transitions:
        """The rows at ``index`` (the guidance is shared)."""
        sched = self.schedule
        return Transitions(
            self.x[index],
            self.x_next[index],
            self.timestep[index],
            StepSchedule(sched.sigma[index], sched.sigma_next[index], sched.std_dev[index]),
            self.prompt_ids[index],
            self.prompt_index[index],
            self.old_log_prob[index],
            self.advantage[index],
            self.sample[index],
            self.version[index],
            self.guidance,
        )


def trained_steps(steps: int, fraction: float) -> list[int]:
    """The first ``max(1, int(steps · fraction))`` steps (flow_grpo's ``timestep_fraction``)."""
    return list(range(max(1, min(steps, int(steps * fraction)))))


def latent_rows(rollout: RolloutFile, steps: Sequence[int]) -> dict[int, int]:
    """The row of ``rollout.latents`` holding x_t for every t a trained step reads (x_j, x_{j+1}
    of each step j): a v2 file may keep only a window (``latent_steps``).

    :raises ValueError: when the file did not keep a latent the steps need
    """
    kept = {int(t): row for row, t in enumerate(rollout.latent_steps.tolist())}
    need = sorted({t for j in steps for t in (j, j + 1)})
    missing = [t for t in need if t not in kept]
    if missing:
        raise ValueError(
            f"the trained steps {list(steps)} need the latents of steps {missing}, which the result "
            f"file did not keep (kept: {sorted(kept)}); ask the fleet to keep them"
        )
    return {t: kept[t] for t in need}


def guidance_of(rollouts: Sequence[RolloutFile]) -> Guidance:
    """The CFG settings every file shares.

    :raises ValueError: when the files disagree (rows of one batch share one CFG)
    """
    found = {
        (
            float(r.metadata["guidanceScale"]),
            str(r.metadata.get("cfgRule", "unless-one")),
            str(r.metadata["negativePrompt"]),
        )
        for r in rollouts
    }
    if len(found) != 1:
        raise ValueError(f"the rollouts of one iteration ran with different CFG settings: {sorted(found)}")
    scale, rule, negative = found.pop()
    return Guidance(scale, rule, negative)


def build_transitions(
    rollouts: Sequence[RolloutFile],
    advantages: Sequence[np.ndarray],
    config: Wan21Config,
    fraction: float = 1.0,
    prompt_index: Sequence[int] | None = None,
) -> Transitions:
    """The rows of every group's trained steps (step-major within a group); ``prompt_index`` is
    each rollout's prompt's row in the policy's embeddings table (default: its position).

    :raises ValueError: for an ODE rollout (no log-probs) or files that disagree on CFG
    """
    guidance = guidance_of(rollouts)
    parts: dict[str, list[torch.Tensor]] = {
        k: [] for k in "x x_next t ids prompt lp adv sample version".split()
    }
    schedules: list[StepSchedule] = []
    offset = 0
    index = list(range(len(rollouts))) if prompt_index is None else list(prompt_index)
    for rollout, adv, prompt in zip(rollouts, advantages, index, strict=True):
        if rollout.log_probs is None:
            raise ValueError("FlowGRPO trains on SDE rollouts; this file has no log-probs (ode)")
        group, steps = rollout.group, trained_steps(rollout.steps, fraction)
        latents = torch.from_numpy(np.array(rollout.latents))
        row_steps = [j for j in steps for _ in range(group)]
        samples = [g for _ in steps for g in range(group)]
        row_of = latent_rows(rollout, steps)
        parts["x"].append(latents[[row_of[j] for j in row_steps], samples])
        parts["x_next"].append(latents[[row_of[j + 1] for j in row_steps], samples])
        parts["t"].append(torch.tensor([float(rollout.timesteps[j]) for j in row_steps], dtype=torch.float64))
        ids = tokenize([str(rollout.metadata["prompt"])], config)[0]
        parts["ids"].append(ids.expand(len(row_steps), -1))
        parts["prompt"].append(torch.full((len(row_steps),), prompt, dtype=torch.int64))
        parts["lp"].append(torch.from_numpy(np.array(rollout.log_probs))[row_steps, samples])
        parts["adv"].append(torch.as_tensor(np.asarray(adv, dtype=np.float64))[samples])
        parts["sample"].append(torch.tensor(samples, dtype=torch.int64) + offset)
        version = int(rollout.metadata["weightsVersions"]["dit"])
        parts["version"].append(torch.full((len(row_steps),), version, dtype=torch.int64))
        noise_level = float(rollout.metadata["noiseLevel"])
        schedules.append(StepSchedule.of(rollout.sigmas.tolist(), row_steps, noise_level))
        offset += group
    return Transitions(
        torch.cat(parts["x"]),
        torch.cat(parts["x_next"]),
        torch.cat(parts["t"]),
        StepSchedule.cat(schedules),
        torch.cat(parts["ids"]),
        torch.cat(parts["prompt"]),
        torch.cat(parts["lp"]),
        torch.cat(parts["adv"]),
        torch.cat(parts["sample"]),
        torch.cat(parts["version"]),
        guidance,
    )
