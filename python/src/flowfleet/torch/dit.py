"""The wan21 DiT as a torch ``nn.Module`` whose ``state_dict()`` is the fleet's ``dit`` weight set.

The forward is the ONNX contract of ``packages/models/src/wan21/onnx/dit-graph.ts``: ``latent``
[B, C, F, H, W], ``timestep`` [B] (t = 1000·σ, float32 on the wire) and ``context``
[B, L, text_dim] → ``velocity`` [B, C, F, H, W]. It is differentiable and batched; run it in
float32 (the fleet's precision) or float64 (``.double()``, for checks).
"""

from __future__ import annotations

import torch
from torch import nn

from ..errors import FlowfleetError
from .config import WAN21_MINI, Wan21Config
from .layers import Block, Head, gelu_mlp
from .rope import rope_tables


def timestep_sinusoid(timestep: torch.Tensor, freq_dim: int, dtype: torch.dtype) -> torch.Tensor:
    """[cos(t·ω), sin(t·ω)] [B, freq_dim] with ω_k = 10000^(−k/half), the angle in float64 (a
    float32 angle at t ≈ 1000 would be off by ~3e-5). t is first rounded to float32, the dtype of
    the ONNX ``timestep`` input."""
    half = freq_dim // 2
    omega = torch.pow(10000.0, -torch.arange(half, dtype=torch.float64, device=timestep.device) / half)
    t = timestep.detach().to(torch.float32).to(torch.float64)
    angles = t[:, None] * omega[None, :]
    return torch.cat([angles.cos(), angles.sin()], dim=-1).to(dtype)


class Wan21DiT(nn.Module):
    """The wan21 DiT (Wan2.1 structure: patch embedding, text and time embeddings, ``layers``
    blocks, head). Its state_dict names and shapes are exactly ``parameterShapes(config)``."""

    def __init__(self, config: Wan21Config = WAN21_MINI) -> None:
        super().__init__()
        self.config = config
        dim = config.dim
        self.patch_embedding = nn.Conv3d(
            config.in_channels, dim, kernel_size=config.patch, stride=config.patch
        )
        self.text_embedding = gelu_mlp(config.text_dim, dim, dim)
        self.time_embedding = nn.Sequential(nn.Linear(config.freq_dim, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.time_projection = nn.Sequential(nn.SiLU(), nn.Linear(dim, 6 * dim))
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.layers))
        self.head = Head(config)
        self._rope: dict[tuple[object, ...], tuple[torch.Tensor, torch.Tensor]] = {}

    def rope(
        self, grid: tuple[int, int, int], dtype: torch.dtype, device: torch.device
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The RoPE (cos, sin) of a token grid in ``dtype``, cached (not part of the state)."""
        key = (grid, dtype, device)
        if key not in self._rope:
            self._rope[key] = rope_tables(self.config, grid, dtype, device)
        return self._rope[key]

    def _check(self, latent: torch.Tensor, timestep: torch.Tensor, context: torch.Tensor) -> None:
        cfg = self.config
        if latent.dim() != 5 or latent.shape[1] != cfg.in_channels:
            raise FlowfleetError(
                "MODEL_INPUT_INVALID",
                f"latent must be [B, {cfg.in_channels}, F, H, W]",
                {"input": "latent", "dims": list(latent.shape)},
            )
        if any(size % p for size, p in zip(latent.shape[2:], cfg.patch, strict=False)):
            raise FlowfleetError(
                "MODEL_INPUT_INVALID",
                "latent frames/height/width must be multiples of the patch",
                {"input": "latent", "dims": list(latent.shape), "patch": list(cfg.patch)},
            )
        batch = latent.shape[0]
        if timestep.shape != (batch,):
            raise FlowfleetError(
                "MODEL_INPUT_INVALID",
                "timestep must have one value per sample",
                {"input": "timestep", "dims": list(timestep.shape), "batch": batch},
            )
        if context.dim() != 3 or context.shape[0] != batch or context.shape[2] != cfg.text_dim:
            raise FlowfleetError(
                "MODEL_INPUT_INVALID",
                f"context must be [B, L, {cfg.text_dim}]",
                {"input": "context", "dims": list(context.shape), "batch": batch},
            )

    def forward(self, latent: torch.Tensor, timestep: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """The velocity [B, C, F, H, W] of ``latent`` at ``timestep`` [B] given ``context``
        [B, L, text_dim]; inputs are cast to the module's dtype.
        Raises :class:`FlowfleetError` ``MODEL_INPUT_INVALID`` for dims that do not fit the config."""
        timestep = torch.as_tensor(timestep, device=latent.device).reshape(-1)
        self._check(latent, timestep, context)
        dtype = self.patch_embedding.weight.dtype
        latent = latent.to(dtype)
        context = context.to(dtype)
        batch, channels, frames, height, width = latent.shape
        pt, ph, pw = self.config.patch
        grid = (frames // pt, height // ph, width // pw)

        x = self.patch_embedding(latent).flatten(2).transpose(1, 2)  # [B, N, D]
        s = timestep_sinusoid(timestep, self.config.freq_dim, dtype)
        e = self.time_embedding(s)  # [B, D]
        e0 = self.time_projection(e).unflatten(1, (6, self.config.dim))  # [B, 6, D]
        ctx = self.text_embedding(context)  # [B, L, D]
        rope = self.rope(grid, dtype, latent.device)
        for block in self.blocks:
            x = block(x, e0, ctx, rope)
        out = self.head(x, e)  # [B, N, (pt, ph, pw, C)]

        blocks = out.reshape(batch, *grid, pt, ph, pw, channels)
        # [B, f, h, w, pt, ph, pw, C] → [B, C, f, pt, h, ph, w, pw]
        return blocks.permute(0, 7, 1, 4, 2, 5, 3, 6).reshape(latent.shape)
