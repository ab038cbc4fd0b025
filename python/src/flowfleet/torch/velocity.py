"""The per-step velocity of a wan21 rollout, batched the way the card's denoise loop batches it.

``packages/models/src/wan21/loop/denoise-loop.ts`` encodes the prompts once, then every denoise
step runs one DiT forward on the batch [uncond ×G, cond ×G] (CFG) or [cond ×G], with the same
t = 1000·σ_i (float32) on every row, and combines v = v_u + w·(v_c − v_u) in float64 rounded to
float32 (``cfgCombine``). Whether CFG runs its unconditional branch is the request's named rule
(RolloutFile v1's ``cfgRule``): ``unless-one`` for every w ≠ 1 (the default), ``above-one`` only for
w > 1 (diffusers, flow_grpo); the unconditional prompt is the request's negative prompt, the
empty prompt by default.

A card whose text input is embeddings (``wan2.1-t2v-1.3b``) has no text encoder: its context is
each prompt's uploaded umT5 embedding [L, text_dim] zero-padded to text_len rows
(:func:`pad_prompt_embeds`, the worker's ``padTextEmbedding``), batched the same way
(:func:`dit_batch_from_embeds`, :func:`velocity_from_embeds`).
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
    t = _timesteps(timestep, latents)
    if not cfg:
        return DitBatch(latents, t, _encode(text_encoder, cond, group), False)
    if negative_ids is None:
        negative_ids = tokenize([""], config)[0]
    uncond = _rows(negative_ids, group, config, "negative_ids")
    context = torch.cat([_encode(text_encoder, uncond, group), _encode(text_encoder, cond, group)])
    return DitBatch(torch.cat([latents, latents]), torch.cat([t, t]), context, True)


def pad_prompt_embeds(embedding: torch.Tensor, config: Wan21Config) -> torch.Tensor:
    """Wan's context rule, as the worker applies it to a request's embeddings: the embedding
    [L, text_dim] (1 ≤ L ≤ text_len; any float dtype, widened exactly) followed by zero rows up to
    text_len — [text_len, text_dim] float32 (Wan's ``WanModel.forward`` pads with zeros and does
    not mask cross-attention, so the zero rows are part of the input).

    :raises FlowfleetError: ``MODEL_INPUT_INVALID`` for another width or a row count outside
        [1, text_len]
    """
    if embedding.dim() != 2 or embedding.shape[1] != config.text_dim:
        raise FlowfleetError(
            "MODEL_INPUT_INVALID",
            f"an embedding must be [L, {config.text_dim}]",
            {"input": "textEmbeddings", "dims": list(embedding.shape), "expected": config.text_dim},
        )
    rows = int(embedding.shape[0])
    if not 1 <= rows <= config.text_len:
        raise FlowfleetError(
            "MODEL_INPUT_INVALID",
            f"an embedding has {rows} rows, expected 1..{config.text_len}",
            {"input": "textEmbeddings", "tokens": rows, "maxTokens": config.text_len},
        )
    padded = torch.zeros(config.text_len, config.text_dim, dtype=torch.float32, device=embedding.device)
    padded[:rows] = embedding.detach().to(torch.float32)
    return padded


def _context_rows(context: torch.Tensor, group: int, config: Wan21Config, name: str) -> torch.Tensor:
    """An embedding [L, text_dim] (one prompt for the group: padded here, then broadcast) or padded
    contexts [G, text_len, text_dim] (one per sample) as [G, text_len, text_dim]."""
    if context.dim() == 2:
        return pad_prompt_embeds(context, config).expand(group, -1, -1)
    expected = (group, config.text_len, config.text_dim)
    if context.dim() != 3 or tuple(context.shape) != expected:
        raise FlowfleetError(
            "MODEL_INPUT_INVALID",
            f"{name} must be [L, {config.text_dim}] or padded [G, {config.text_len}, {config.text_dim}]"
            f" with G = {group}",
            {"input": name, "dims": list(context.shape), "group": group},
        )
    return context


def dit_batch_from_embeds(
    config: Wan21Config,
    latents: torch.Tensor,
    timestep: Timestep,
    prompt_embeds: torch.Tensor,
    *,
    guidance_scale: float,
    negative_embeds: torch.Tensor | None = None,
    cfg_rule: str = "unless-one",
    cfg: bool | None = None,
) -> DitBatch:
    """:func:`dit_batch` for a card whose text input is embeddings: the context is
    ``prompt_embeds`` — one prompt's embedding [L, text_dim], or contexts [G, text_len, text_dim]
    already padded by :func:`pad_prompt_embeds` (one per sample) — and, under CFG,
    ``negative_embeds`` (required then: the empty prompt's embedding is umT5's, not ours) in the
    batch [uncond ×G, cond ×G].

    :raises FlowfleetError: ``MODEL_INPUT_INVALID`` (a shape; no negative embedding under CFG)
    """
    group = latents.shape[0]
    cfg = uses_cfg(guidance_scale, cfg_rule) if cfg is None else cfg
    cond = _context_rows(prompt_embeds, group, config, "prompt_embeds")
    t = _timesteps(timestep, latents)
    if not cfg:
        return DitBatch(latents, t, cond, False)
    if negative_embeds is None:
        raise FlowfleetError(
            "MODEL_INPUT_INVALID",
            "CFG needs the negative prompt's embedding (negative_embeds)",
            {"input": "negative_embeds", "guidanceScale": guidance_scale, "cfgRule": cfg_rule},
        )
    uncond = _context_rows(negative_embeds, group, config, "negative_embeds")
    context = torch.cat([uncond.to(cond.dtype), cond])
    return DitBatch(torch.cat([latents, latents]), torch.cat([t, t]), context, True)


def velocity_from_embeds(
    dit: Wan21DiT,
    latents: torch.Tensor,
    timestep: Timestep,
    prompt_embeds: torch.Tensor,
    *,
    guidance_scale: float,
    negative_embeds: torch.Tensor | None = None,
    cfg_rule: str = "unless-one",
    cfg: bool | None = None,
) -> torch.Tensor:
    """:func:`velocity` for a card whose text input is embeddings (see
    :func:`dit_batch_from_embeds`): one batched DiT forward, then CFG. Differentiable in the
    DiT's parameters."""
    batch = dit_batch_from_embeds(
        dit.config,
        latents,
        timestep,
        prompt_embeds,
        guidance_scale=guidance_scale,
        negative_embeds=negative_embeds,
        cfg_rule=cfg_rule,
        cfg=cfg,
    )
    return _forward(dit, batch, latents.shape[0], guidance_scale)


def _timesteps(timestep: Timestep, latents: torch.Tensor) -> torch.Tensor:
    """t on every row [G], float32 (rounded from float64, as the loop's input)."""
    group = latents.shape[0]
    t = torch.as_tensor(timestep, dtype=torch.float64, device=latents.device)
    t = t.reshape(-1).expand(group) if t.numel() == 1 else t.reshape(group)
    return t.to(torch.float32)


def _forward(dit: Wan21DiT, batch: DitBatch, group: int, guidance_scale: float) -> torch.Tensor:
    out = dit(batch.latent, batch.timestep, batch.context)
    if not batch.cfg:
        return out
    return cfg_combine(out[:group], out[group:], guidance_scale)


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
    return _forward(dit, batch, latents.shape[0], guidance_scale)
