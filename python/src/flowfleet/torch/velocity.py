"""The per-step velocity of a wan21 rollout, batched the way the card's denoise loop batches it.

``packages/models/src/wan21/loop/denoise-loop.ts`` encodes the prompts once, then every denoise
step runs one DiT forward on the batch [uncond ×G, cond ×G] (CFG) or [cond ×G], with the same
t = 1000·σ_i (float32) on every row, and combines v = v_u + w·(v_c − v_u) in float64 rounded to
float32 (``cfgCombine``). Whether CFG runs its unconditional branch is the request's named rule
(RolloutFile v1's ``cfgRule``): ``unless-one`` for every w ≠ 1 (the default), ``above-one`` only for
w > 1 (diffusers, flow_grpo); the unconditional prompt is the request's negative prompt, the
empty prompt by default.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..errors import FlowfleetError
from .config import Wan21Config
from .dit import Wan21DiT
from .text_encoder import Wan21TextEncoder
from .tokenize import tokenize

Timestep = float | torch.Tensor


CFG_RULES = ("unless-one", "above-one")


def uses_cfg(guidance_scale: float, cfg_rule: str = "unless-one") -> bool:
    """Whether CFG runs its unconditional branch for scale ``guidance_scale`` under ``cfg_rule``
    (``unless-one``: w ≠ 1; ``above-one``: w > 1), as the fleet's cards decide it."""
    if cfg_rule not in CFG_RULES:
        raise FlowfleetError(
            "MODEL_INVALID_REQUEST", f"cfgRule must be one of {CFG_RULES}", {"cfgRule": cfg_rule}
        )
    return guidance_scale > 1 if cfg_rule == "above-one" else guidance_scale != 1


@dataclass(frozen=True)
class DitBatch:
    """One DiT forward's inputs for a group of G samples (the ONNX contract's names)."""

    latent: torch.Tensor  # [batch, C, F, H, W]
    timestep: torch.Tensor  # [batch], float32
    context: torch.Tensor  # [batch, L, text_dim]
    #: True when the batch is [uncond ×G, cond ×G].
    cfg: bool


def _rows(ids: torch.Tensor, group: int, config: Wan21Config, name: str) -> torch.Tensor:
    """Token ids [L] (one prompt for the group) or [G, L] (one per sample) as [1 or G, L]."""
    if ids.dim() == 1:
        ids = ids.unsqueeze(0)
    if ids.dim() != 2 or ids.shape[1] != config.text_len or ids.shape[0] not in (1, group):
        raise FlowfleetError(
            "MODEL_INPUT_INVALID",
            f"{name} must be [{config.text_len}] or [G, {config.text_len}] with G = {group}",
            {"input": name, "dims": list(ids.shape), "group": group},
        )
    return ids


def _encode(text_encoder: Wan21TextEncoder, ids: torch.Tensor, group: int) -> torch.Tensor:
    """Context [G, L, text_dim]: each distinct row encoded once, then broadcast (as the loop)."""
    return text_encoder(ids.to(text_encoder.text_encoder.pos_embedding.device)).expand(group, -1, -1)


def dit_batch(
    text_encoder: Wan21TextEncoder,
    latents: torch.Tensor,
    timestep: Timestep,
    prompt_ids: torch.Tensor,
    *,
    guidance_scale: float,
    negative_ids: torch.Tensor | None = None,
    cfg_rule: str = "unless-one",
    cfg: bool | None = None,
) -> DitBatch:
    """The forward batch of one denoise step: latents [G, C, F, H, W] (duplicated under CFG),
    the timestep on every row, and the encoded context [uncond ×G, cond ×G] or [cond ×G].

    ``timestep`` is t = 1000·σ, a scalar or [G]; ``prompt_ids``/``negative_ids`` are byte ids
    [L] or [G, L] (``negative_ids`` defaults to the empty prompt). ``cfg_rule`` is the rollout's
    (its file records it); ``cfg`` overrides what :func:`uses_cfg` decides.
    """
    config = text_encoder.config
    group = latents.shape[0]
    cfg = uses_cfg(guidance_scale, cfg_rule) if cfg is None else cfg
    cond = _rows(prompt_ids, group, config, "prompt_ids")
    t = torch.as_tensor(timestep, dtype=torch.float64, device=latents.device)
    t = t.reshape(-1).expand(group) if t.numel() == 1 else t.reshape(group)
    t = t.to(torch.float32)
    if not cfg:
        return DitBatch(latents, t, _encode(text_encoder, cond, group), False)
    if negative_ids is None:
        negative_ids = tokenize([""], config)[0]
    uncond = _rows(negative_ids, group, config, "negative_ids")
    context = torch.cat([_encode(text_encoder, uncond, group), _encode(text_encoder, cond, group)])
    return DitBatch(torch.cat([latents, latents]), torch.cat([t, t]), context, True)


def cfg_combine(uncond: torch.Tensor, cond: torch.Tensor, scale: float) -> torch.Tensor:
    """v_u + w·(v_c − v_u) in float64, rounded back to the inputs' dtype (``cfgCombine``)."""
    u = uncond.to(torch.float64)
    return (u + scale * (cond.to(torch.float64) - u)).to(uncond.dtype)


def velocity(
    dit: Wan21DiT,
    text_encoder: Wan21TextEncoder,
    latents: torch.Tensor,
    timestep: Timestep,
    prompt_ids: torch.Tensor,
    *,
    guidance_scale: float,
    negative_ids: torch.Tensor | None = None,
    cfg_rule: str = "unless-one",
    cfg: bool | None = None,
) -> torch.Tensor:
    """The velocity [G, C, F, H, W] the fleet's denoise step uses for latents x_i at t_i:
    one batched DiT forward (see :func:`dit_batch`), then CFG. Differentiable in the DiT's (and
    the text encoder's) parameters; computed in the DiT's dtype."""
    batch = dit_batch(
        text_encoder,
        latents,
        timestep,
        prompt_ids,
        guidance_scale=guidance_scale,
        negative_ids=negative_ids,
        cfg_rule=cfg_rule,
        cfg=cfg,
    )
    out = dit(batch.latent, batch.timestep, batch.context)
    if not batch.cfg:
        return out
    group = latents.shape[0]
    return cfg_combine(out[:group], out[group:], guidance_scale)
