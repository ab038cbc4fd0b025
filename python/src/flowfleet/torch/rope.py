"""Wan2.1's 3D rotary embedding (a port of ``packages/models/src/wan21/rope-tables.ts``).

The head's d/2 rotary pairs are split across the (frame, height, width) axes as Wan splits them,
and pair m of token n = (fi·h + hi)·w + wi turns by the angle of its axis position.
"""

from __future__ import annotations

import torch

from .config import Wan21Config


def rope_axis_pairs(config: Wan21Config) -> tuple[int, int, int]:
    """Rotary pairs per axis (F, H, W): cH = cW = ⌊c/3⌋ and F takes the rest, c = d/2."""
    pairs = config.head_dim // 2
    per_axis = pairs // 3
    return pairs - 2 * per_axis, per_axis, per_axis


def rope_angles(config: Wan21Config, grid: tuple[int, int, int]) -> torch.Tensor:
    """The float64 angles ``[f·h·w, d/2]`` of a token grid (f, h, w): [fi·θ_F, hi·θ_H, wi·θ_W]
    with θ_k = 10000^(−k/c_axis) for k < c_axis."""
    f, h, w = grid
    columns = []
    for size, pairs in zip((f, h, w), rope_axis_pairs(config), strict=False):
        theta = torch.pow(10000.0, -torch.arange(pairs, dtype=torch.float64) / pairs)
        columns.append(torch.arange(size, dtype=torch.float64)[:, None] * theta[None, :])
    fa, ha, wa = columns
    angles = torch.cat(
        [
            fa[:, None, None, :].expand(f, h, w, -1),
            ha[None, :, None, :].expand(f, h, w, -1),
            wa[None, None, :, :].expand(f, h, w, -1),
        ],
        dim=-1,
    )
    return angles.reshape(f * h * w, -1)


def rope_tables(
    config: Wan21Config,
    grid: tuple[int, int, int],
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin ``[N, d/2]`` of the grid, computed in float64 and then cast to ``dtype``.

    In float32 they are exactly the tables the fleet feeds its ONNX graph (``rope_cos``,
    ``rope_sin``).
    """
    angles = rope_angles(config, grid)
    return angles.cos().to(dtype=dtype, device=device), angles.sin().to(dtype=dtype, device=device)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotates interleaved pairs of ``x`` ``[B, heads, N, d]`` by the ``[N, d/2]`` tables:
    (v[2m], v[2m+1]) → (v[2m]·cos − v[2m+1]·sin, v[2m]·sin + v[2m+1]·cos)."""
    pairs = x.unflatten(-1, (-1, 2))
    re, im = pairs[..., 0], pairs[..., 1]
    out_re = re * cos - im * sin
    out_im = re * sin + im * cos
    return torch.stack((out_re, out_im), dim=-1).flatten(-2)
