"""The FlowGRPO example's own maths, without a fleet: its torch SDE log-prob against the golden
vectors of DESIGN.md §4 (packages/numerics/testdata/flowmath.json, made by an independent numpy
implementation), its gradient, the rewards' optimum, and the advantages."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from grpo import group_advantages
from rewards import COLOR_TARGETS, PROMPT_BLIND_BEST, REWARDS, color_reward
from sde import StepSchedule, sde_log_prob, std_dev_t

import flowgrpo_support  # noqa: F401 - puts examples/flowgrpo on sys.path
from fleet_support import REPO

GOLDEN = json.loads((REPO / "packages" / "numerics" / "testdata" / "flowmath.json").read_text())
CASES = [("sde_sample", c, c["sample"]) for c in GOLDEN["sde_sample"]]
CASES += [("sde_recompute", c, c["prevSample"]) for c in GOLDEN["sde_recompute"]]


def rel(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-300)


@pytest.mark.parametrize(
    ("group", "case", "x_next"), CASES, ids=[f"{g}-{i}" for i, (g, _, _) in enumerate(CASES)]
)
def test_the_log_prob_matches_the_golden_vectors(group: str, case: dict, x_next: list[float]) -> None:
    """stdDevT and logProb within 1e-12 relative, the mean within 1 float32 ulp (§4's tolerances)."""
    s = std_dev_t(case["sigmas"], case["step"], case["noiseLevel"])
    assert rel(s, case["stdDevT"]) <= 1e-12
    schedule = StepSchedule.of(case["sigmas"], [case["step"]], case["noiseLevel"])
    f32 = torch.float32
    x = torch.tensor(case["x"], dtype=f32)[None]
    v = torch.tensor(case["v"], dtype=f32)[None]
    log_prob, mean = sde_log_prob(x, v, torch.tensor(x_next, dtype=f32)[None], schedule)
    assert rel(float(log_prob[0]), case["logProb"]) <= 1e-12
    want = np.asarray(case["mean"], dtype=np.float32)
    ulp = np.spacing(np.abs(want)).astype(np.float64)
    assert np.all(np.abs(mean[0].numpy().astype(np.float32).astype(np.float64) - want) <= ulp)
    if group == "sde_sample":
        assert rel(float(schedule.std[0]), case["std"]) <= 1e-12


def test_at_sigma_one_the_noise_scale_uses_sigma_one_of_the_table() -> None:
    """σ_0 = 1 (every linear-shift schedule; no golden case has it): σ̃ = σ_1, not σ."""
    assert std_dev_t([1.0, 0.75, 0.0], 0, 0.7) == pytest.approx(0.7 * math.sqrt(1 / (1 - 0.75)), rel=1e-15)
    assert std_dev_t([1.0, 0.75, 0.0], 1, 0.7) == pytest.approx(0.7 * math.sqrt(0.75 / 0.25), rel=1e-15)


def test_the_log_prob_has_the_analytic_gradient_in_the_velocity() -> None:
    """d logp / dv = mean over elements of (x' − μ)·coef_v / e² — gradients reach the DiT."""
    sigmas = [1.0, 0.8, 0.5, 0.0]
    schedule = StepSchedule.of(sigmas, [1], 0.7)
    gen = torch.Generator().manual_seed(0)
    x, x_next = torch.randn(2, 3, 4, generator=gen), torch.randn(2, 3, 4, generator=gen)
    v = torch.randn(2, 3, 4, generator=gen, dtype=torch.float64).requires_grad_(True)
    log_prob, mean = sde_log_prob(x, v, x_next, schedule)
    log_prob.sum().backward()
    s, sigma, dt = std_dev_t(sigmas, 1, 0.7), 0.8, 0.5 - 0.8
    coef_v = (1 + s * s * (1 - sigma) / (2 * sigma)) * dt
    e2 = s * s * -dt
    expected = (x_next.double() - mean.detach()) * coef_v / e2 / 12
    assert v.grad is not None and torch.allclose(v.grad, expected, rtol=1e-12, atol=0)


def test_the_color_reward_is_zero_exactly_at_the_targets_and_depends_on_the_prompt() -> None:
    g, c, f, h, w = 3, 4, 2, 4, 4
    noise = np.random.default_rng(0).standard_normal((g, c, f, h, w)).astype(np.float32)
    centred = noise - noise.mean(axis=(2, 3, 4), keepdims=True)
    for prompt in REWARDS["color"].prompts:
        target = next(COLOR_TARGETS[word] for word in prompt.split() if word in COLOR_TARGETS)
        at_target = centred + np.asarray(target, dtype=np.float32)[None, :, None, None, None]
        assert np.allclose(color_reward(at_target, [prompt] * g), 0, atol=1e-12)
        assert np.all(REWARDS["color"](at_target + 0.1, [prompt] * g) < -0.009)
    # The same latents score differently under different prompts.
    red, blue = (
        color_reward(centred + 0.6 * np.eye(4)[0, None, :, None, None, None], [p] * g)
        for p in ("a red apple", "a blue lake")
    )
    assert np.all(red > blue)
    # Ignoring the prompt caps the mean reward: all channel means at 0 score the blind bound.
    blind = np.mean([color_reward(centred, [p] * g).mean() for p in REWARDS["color"].prompts])
    assert math.isclose(blind, PROMPT_BLIND_BEST, rel_tol=1e-9) and PROMPT_BLIND_BEST == pytest.approx(-0.18)


def test_a_prompt_without_a_colour_is_refused() -> None:
    with pytest.raises(ValueError, match="naming one of"):
        color_reward(np.zeros((1, 4, 1, 2, 2), np.float32), ["a cat"])


def test_group_advantages_are_normalised_within_the_group() -> None:
    adv = group_advantages(np.array([1.0, 2.0, 3.0, 6.0]))
    assert abs(adv.mean()) < 1e-12 and adv.std() == pytest.approx(1, rel=1e-4)
    assert np.all(group_advantages(np.full(4, 0.3)) == 0)  # a flat group teaches nothing
