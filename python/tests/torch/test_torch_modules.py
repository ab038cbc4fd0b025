"""The torch modules on their own: tokenizer, RoPE tables, the CFG batching rule, batch
independence, gradients and coded refusals (the parity with the fleet is test_torch_parity)."""

from __future__ import annotations

import math

import pytest
import torch

from flowfleet import FlowfleetError
from flowfleet.torch import (
    PAD_TOKEN,
    WAN21_MINI,
    Wan21DiT,
    Wan21TextEncoder,
    dit_batch,
    rope_axis_pairs,
    rope_tables,
    tokenize,
    velocity,
)


@pytest.fixture(scope="module")
def models() -> tuple[Wan21DiT, Wan21TextEncoder]:
    torch.manual_seed(0)
    return Wan21DiT(), Wan21TextEncoder()


def test_tokenize_pads_truncates_and_keeps_bytes() -> None:
    ids = tokenize(["ab", "", "é" * 9], WAN21_MINI)
    assert ids.dtype == torch.int64 and ids.shape == (3, 16)
    assert ids[0].tolist() == [97, 98] + [PAD_TOKEN] * 14
    assert ids[1].tolist() == [PAD_TOKEN] * 16
    assert ids[2].tolist() == [0xC3, 0xA9] * 8  # 18 bytes cut to L = 16


def test_rope_tables_split_the_pairs_across_axes_as_wan() -> None:
    assert rope_axis_pairs(WAN21_MINI) == (6, 5, 5)  # d = 32: 16 pairs
    cos, sin = rope_tables(WAN21_MINI, (2, 3, 4), torch.float64)
    assert cos.shape == (24, 16) and sin.shape == (24, 16)
    n = (1 * 3 + 2) * 4 + 3  # token (fi, hi, wi) = (1, 2, 3)
    angle_w1 = 3 * 10000 ** (-1 / 5)  # pair 1 of the W group (pairs 11..15)
    assert math.isclose(sin[n, 12].item(), math.sin(angle_w1), rel_tol=1e-15)
    assert math.isclose(cos[n, 0].item(), math.cos(1.0), rel_tol=1e-15)  # F pair 0, fi = 1
    assert math.isclose(cos[n, 6].item(), math.cos(2.0), rel_tol=1e-15)  # H pair 0, hi = 2
    assert torch.allclose(cos * cos + sin * sin, torch.ones_like(cos), atol=1e-15)


def test_cfg_batches_uncond_then_cond_and_follows_the_scale(models) -> None:
    _, te = models
    latents = torch.randn(3, 4, 1, 4, 4)
    prompt = tokenize(["a cat"], WAN21_MINI)[0]
    with torch.no_grad():
        on = dit_batch(te, latents, 500.0, prompt, guidance_scale=4.5)
        off = dit_batch(te, latents, 500.0, prompt, guidance_scale=1.0)
        forced = dit_batch(te, latents, 500.0, prompt, guidance_scale=1.0, cfg=True)
        empty = te(tokenize([""], WAN21_MINI))
        cond = te(prompt[None])
    assert on.cfg and on.latent.shape[0] == 6 and on.timestep.tolist() == [500.0] * 6
    assert torch.equal(on.latent[:3], latents) and torch.equal(on.latent[3:], latents)
    assert torch.equal(on.context[:3], empty.expand(3, -1, -1))
    assert torch.equal(on.context[3:], cond.expand(3, -1, -1))
    assert not off.cfg and off.latent.shape[0] == 3
    assert forced.cfg and forced.latent.shape[0] == 6


def test_samples_are_independent_in_a_batch(models) -> None:
    dit, te = (m.double() for m in models)
    try:
        latents = torch.randn(3, 4, 2, 4, 6, dtype=torch.float64)
        ids = tokenize(["one", "two", "three"], WAN21_MINI)
        t = torch.tensor([900.0, 40.0, 1.5])
        with torch.no_grad():
            batched = velocity(dit, te, latents, t, ids, guidance_scale=3.0)
            for g in range(3):
                single = velocity(dit, te, latents[g : g + 1], t[g], ids[g], guidance_scale=3.0)
                assert torch.allclose(batched[g : g + 1], single, rtol=0, atol=1e-12)
    finally:
        for m in models:
            m.float()


def test_velocity_is_differentiable_in_every_parameter(models) -> None:
    dit, te = models
    dit.zero_grad(), te.zero_grad()
    latents = torch.randn(2, 4, 1, 4, 4)
    ids = tokenize(["a", "b"], WAN21_MINI)
    v = velocity(dit, te, latents, 700.0, ids, guidance_scale=4.5)
    (v * torch.randn_like(v)).sum().backward()
    for module in (dit, te):
        for name, p in module.named_parameters():
            assert p.grad is not None and torch.isfinite(p.grad).all(), name
            assert p.grad.abs().sum() > 0, name


def test_float32_agrees_with_float64(models) -> None:
    dit, te = models
    latents = torch.randn(2, 4, 2, 8, 8)
    ids = tokenize(["a red fox"], WAN21_MINI)[0]
    with torch.no_grad():
        v32 = velocity(dit, te, latents, 999.0, ids, guidance_scale=4.5)
        v64 = velocity(dit.double(), te.double(), latents.double(), 999.0, ids, guidance_scale=4.5)
    dit.float(), te.float()
    assert v32.dtype == torch.float32 and v64.dtype == torch.float64
    assert (v32.double() - v64).abs().max() < 1e-5


def test_refusals_carry_the_fleet_codes(models) -> None:
    dit, te = models
    ctx = torch.zeros(1, 16, 64)
    cases = [
        (lambda: dit(torch.zeros(1, 3, 1, 4, 4), torch.zeros(1), ctx), "latent"),
        (lambda: dit(torch.zeros(1, 4, 1, 5, 4), torch.zeros(1), ctx), "latent"),
        (lambda: dit(torch.zeros(1, 4, 1, 4, 4), torch.zeros(2), ctx), "timestep"),
        (lambda: dit(torch.zeros(1, 4, 1, 4, 4), torch.zeros(1), ctx[..., :8]), "context"),
        (lambda: te(torch.zeros(1, 15, dtype=torch.int64)), "tokens"),
        (lambda: te(torch.full((1, 16), 257)), "tokens"),
    ]
    for run, field in cases:
        with pytest.raises(FlowfleetError) as refused:
            run()
        assert refused.value.code == "MODEL_INPUT_INVALID"
        assert refused.value.details["input"] == field
    with pytest.raises(FlowfleetError) as bad:
        WAN21_MINI.with_overrides(heads=3)
    assert bad.value.code == "MODEL_CONFIG_INVALID" and bad.value.details["field"] == "dim"


def test_the_named_cfg_rule_decides_the_unconditional_branch() -> None:
    from flowfleet.torch.velocity import uses_cfg

    assert uses_cfg(0.5) and uses_cfg(4.5) and not uses_cfg(1.0)
    assert not uses_cfg(0.5, "above-one") and not uses_cfg(1.0, "above-one")
    assert uses_cfg(4.5, "above-one")
    with pytest.raises(FlowfleetError) as refused:
        uses_cfg(2.0, "always")
    assert refused.value.code == "MODEL_INVALID_REQUEST"
