"""The FlowGRPO SDE step's log-probability in torch, as the fleet computes it (DESIGN.md §4,
``packages/numerics``' ``flowGrpoStdDev`` and ``flowSdeStep`` given ``prevSample``), so a trainer
recomputes the log-prob of a stored transition x_i → x_{i+1} under its current velocity, with
gradients.

With Δ = σ' − σ and s = std_dev_t: μ = x·(1 + s²Δ/(2σ)) + v·(1 + s²(1 − σ)/(2σ))·Δ,
e = s·sqrt(−Δ), and the log-prob is the mean over every element of one sample of
−(x' − μ)²/(2e²) − ln e − ½ ln 2π. Like the fleet, the mean and the log-prob are computed in
float64 from the float32 latents and velocity; the schedule scalars are Python floats (float64).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

HALF_LOG_TWO_PI = 0.5 * math.log(2 * math.pi)


def std_dev_t(sigmas: Sequence[float], step: int, noise_level: float) -> float:
    """FlowGRPO's noise scale of step ``step``: a·sqrt(σ/(1 − σ̃)), σ̃ = σ_1 when σ = 1, else σ."""
    sigma = float(sigmas[step])
    tilde = float(sigmas[1]) if sigma == 1 else sigma
    return math.sqrt(sigma / (1 - tilde)) * noise_level


@dataclass(frozen=True)
class StepSchedule:
    """The scalars of one SDE step, per row of a batch (rows may come from different steps)."""

    sigma: torch.Tensor  # [B] float64
    sigma_next: torch.Tensor  # [B] float64
    std_dev: torch.Tensor  # [B] float64, std_dev_t

    @property
    def std(self) -> torch.Tensor:
        """e = std_dev_t·sqrt(σ − σ'), [B] float64."""
        return self.std_dev * torch.sqrt(self.sigma - self.sigma_next)

    @classmethod
    def of(cls, sigmas: Sequence[float], steps: Sequence[int], noise_level: float) -> StepSchedule:
        """The schedule of rows taken at ``steps`` of one sigma table σ_0 … σ_T."""
        f64 = torch.float64
        return cls(
            torch.tensor([float(sigmas[i]) for i in steps], dtype=f64),
            torch.tensor([float(sigmas[i + 1]) for i in steps], dtype=f64),
            torch.tensor([std_dev_t(sigmas, i, noise_level) for i in steps], dtype=f64),
        )

    @classmethod
    def cat(cls, parts: Sequence[StepSchedule]) -> StepSchedule:
        return cls(
            torch.cat([p.sigma for p in parts]),
            torch.cat([p.sigma_next for p in parts]),
            torch.cat([p.std_dev for p in parts]),
        )


def _per_row(values: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return values.reshape(-1, *([1] * (like.dim() - 1)))


def sde_mean(x: torch.Tensor, v: torch.Tensor, schedule: StepSchedule) -> torch.Tensor:
    """μ [B, …] in float64 from the latents x and velocity v [B, …] (float32 or float64)."""
    sigma = _per_row(schedule.sigma, x)
    dt = _per_row(schedule.sigma_next, x) - sigma
    variance = _per_row(schedule.std_dev, x) ** 2
    coef_x = 1 + variance * dt / (2 * sigma)
    coef_v = (1 + variance * (1 - sigma) / (2 * sigma)) * dt
    return x.to(torch.float64) * coef_x + v.to(torch.float64) * coef_v


def sde_log_prob(
    x: torch.Tensor, v: torch.Tensor, x_next: torch.Tensor, schedule: StepSchedule
) -> tuple[torch.Tensor, torch.Tensor]:
    """(log-prob [B] float64, mean μ [B, …] float64) of the transition x → x_next under v."""
    mean = sde_mean(x, v, schedule)
    std = schedule.std
    squares = (x_next.to(torch.float64) - mean).pow(2).flatten(1).mean(dim=1)
    log_prob = -squares / (2 * std**2) - torch.log(std) - HALF_LOG_TWO_PI
    return log_prob, mean
