"""flow_grpo's objective on one iteration's transitions: group-normalised advantages, the clipped
ratio loss scaled per step as its Wan2.1 trainer scales it, an optional KL to the reference
policy, gradient-norm clipping and AdamW (flow_grpo's ``config.train`` defaults)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from policy import Policy, chunks
from transitions import Transitions


@dataclass(frozen=True)
class Objective:
    #: PPO clip range on the ratio (flow_grpo's Wan2.1 config: 1e-3).
    clip_range: float = 1e-3
    #: Advantages are clipped to [−adv_clip_max, adv_clip_max] (flow_grpo: 5).
    adv_clip_max: float = 5.0
    #: Weight of the KL to the reference policy (flow_grpo's Wan2.1 config: 0.004; 0 = off).
    beta: float = 0.004
    #: Gradient-norm clip (flow_grpo: 1.0).
    max_grad_norm: float = 1.0
    #: Optimizer steps per iteration, each over every row (flow_grpo: 2 per sampling epoch).
    inner_epochs: int = 2
    #: Rows per forward/backward (gradients accumulate over the chunks of an epoch).
    micro_batch: int = 256


def group_advantages(rewards: np.ndarray, eps: float = 1e-4) -> np.ndarray:
    """(r − mean) / (std + eps) within one prompt's group (flow_grpo's per-prompt tracking)."""
    r = np.asarray(rewards, dtype=np.float64)
    advantages: np.ndarray = (r - r.mean()) / (r.std() + eps)
    return advantages


@dataclass(frozen=True)
class StepStats:
    #: Max |ratio − 1| of the first inner epoch, where the policy is the one the rollouts used.
    ratio_err_max: float
    #: Mean KL(π_θ ‖ π_ref) per transition, before this iteration's update.
    kl: float
    #: Fraction of (row, epoch) ratios outside [1 − clip, 1 + clip].
    clip_frac: float


def _ratio_error(
    policy: Policy,
    rows: Transitions,
    first: torch.Tensor,
    current: int,
    states: Mapping[int, Mapping[str, torch.Tensor]],
) -> float:
    """Max |ratio − 1| of the fleet's log-probs against the recompute of the same trajectory under
    the weights each row ran on (``first`` when that is the current version)."""
    errors = []
    for version in torch.unique(rows.version).tolist():
        mask = rows.version == version
        if version == current:
            lp = first[mask]
        else:
            part = rows.rows(mask)
            with torch.no_grad(), policy.dit_at(states[version]) as dit:
                lp, _ = policy.log_prob(dit, part)
        errors.append((torch.exp(lp - rows.old_log_prob[mask]) - 1).abs().max())
    return float(torch.stack(errors).max())


def train_iteration(
    policy: Policy,
    optimizer: torch.optim.Optimizer,
    params: Sequence[torch.nn.Parameter],
    rows: Transitions,
    objective: Objective,
    current: int,
    states: Mapping[int, Mapping[str, torch.Tensor]],
) -> StepStats:
    """``objective.inner_epochs`` AdamW steps on every row; the stats of the iteration."""
    n = len(rows)
    adv = rows.advantage.clamp(-objective.adv_clip_max, objective.adv_clip_max)
    # flow_grpo's Wan2.1 trainer scales each step's loss by std_dev_t / sqrt(σ − σ').
    scale = rows.schedule.std_dev / torch.sqrt(rows.schedule.sigma - rows.schedule.sigma_next)
    std = rows.schedule.std
    # The reference's SDE means (the KL term, and the logged KL even when beta = 0).
    with torch.no_grad(), policy.reference() as reference:
        ref_mean = [
            policy.log_prob(reference, rows.rows(part))[1] for part in chunks(n, objective.micro_batch)
        ]
    first = torch.empty(n, dtype=torch.float64)
    kl_first = torch.empty(n, dtype=torch.float64)
    clipped = 0
    policy.dit.train()
    for epoch in range(objective.inner_epochs):
        optimizer.zero_grad(set_to_none=True)
        for k, part in enumerate(chunks(n, objective.micro_batch)):
            sub = rows.rows(part)
            lp, mean = policy.log_prob(policy.dit, sub)
            ratio = torch.exp(lp - sub.old_log_prob)
            a = adv[part]
            unclipped = -a * ratio
            clip = -a * ratio.clamp(1 - objective.clip_range, 1 + objective.clip_range)
            policy_loss = torch.maximum(unclipped, clip) * scale[part]
            kl = (mean - ref_mean[k]).pow(2).flatten(1).mean(dim=1) / (2 * std[part] ** 2)
            loss = (policy_loss + objective.beta * kl).sum() / n
            torch.autograd.backward(loss)
            clipped += int(((ratio - 1).abs() > objective.clip_range).sum())
            if epoch == 0:
                first[part] = lp.detach()
                kl_first[part] = kl.detach()
        torch.nn.utils.clip_grad_norm_(params, objective.max_grad_norm)
        optimizer.step()
    return StepStats(
        ratio_err_max=_ratio_error(policy, rows, first, current, states),
        kl=float(kl_first.mean()),
        clip_frac=clipped / (n * objective.inner_epochs),
    )
