"""The building blocks of the wan21 DiT: RMSNorm, attention, one transformer block and the head.

Module and parameter names are the Wan2.1 state_dict vocabulary of
``packages/models/src/wan21/parameter-shapes.ts``; the maths is
``packages/models/src/wan21/onnx/dit-parts.ts`` (the graph the fleet's ONNX Runtime backend runs)
written with torch ops.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .config import Wan21Config
from .rope import apply_rope


class RMSNorm(nn.Module):
    """x / sqrt(mean(x²) + eps) · weight over the last axis (the full model width, as in Wan)."""

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean_square = (x * x).mean(dim=-1, keepdim=True)
        return x / torch.sqrt(mean_square + self.eps) * self.weight


def layer_norm(x: torch.Tensor, eps: float) -> torch.Tensor:
    """LayerNorm over the last axis without affine parameters."""
    return F.layer_norm(x, (x.shape[-1],), eps=eps)


def modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """The adaLN modulation x·(1 + scale) + shift (shift/scale broadcast over tokens)."""
    return x * (1 + scale) + shift


def gelu_mlp(in_dim: int, hidden: int, out_dim: int) -> nn.Sequential:
    """Linear → GELU (tanh approximation) → Linear, named ``.0`` and ``.2`` as in Wan."""
    return nn.Sequential(nn.Linear(in_dim, hidden), nn.GELU(approximate="tanh"), nn.Linear(hidden, out_dim))


class Attention(nn.Module):
    """Multi-head attention with RMSNorm on the projected queries and keys (Wan's
    ``WanSelfAttention``/``WanCrossAttention``): q, k, v, o Linears and norm_q, norm_k."""

    def __init__(self, config: Wan21Config) -> None:
        super().__init__()
        dim = config.dim
        self.heads = config.heads
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.o = nn.Linear(dim, dim)
        self.norm_q = RMSNorm(dim, config.eps)
        self.norm_k = RMSNorm(dim, config.eps)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        """[B, S, D] → [B, heads, S, d]."""
        return x.unflatten(-1, (self.heads, -1)).transpose(1, 2)

    def forward(
        self,
        x: torch.Tensor,
        source: torch.Tensor,
        rope: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> torch.Tensor:
        """Queries from ``x`` [B, N, D], keys and values from ``source`` [B, S, D]; ``rope``
        (cos, sin) [N, d/2] rotates queries and keys (self-attention only)."""
        q = self._split(self.norm_q(self.q(x)))
        k = self._split(self.norm_k(self.k(source)))
        v = self._split(self.v(source))
        if rope is not None:
            q = apply_rope(q, *rope)
            k = apply_rope(k, *rope)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        out = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.o(out.transpose(1, 2).flatten(2))


class Block(nn.Module):
    """One Wan block: modulated self-attention with RoPE, cross-attention on the text context
    (after the affine ``norm3``), modulated FFN; ``modulation`` [1, 6, D] plus the per-sample
    time projection gives (shift, scale, gate) for the attention and for the FFN."""

    def __init__(self, config: Wan21Config) -> None:
        super().__init__()
        dim = config.dim
        self.eps = config.eps
        self.self_attn = Attention(config)
        self.cross_attn = Attention(config)
        self.norm3 = nn.LayerNorm(dim, eps=config.eps)
        self.ffn = gelu_mlp(dim, config.ffn_dim, dim)
        self.modulation = nn.Parameter(torch.randn(1, 6, dim) / math.sqrt(dim))

    def forward(
        self,
        x: torch.Tensor,
        e0: torch.Tensor,
        context: torch.Tensor,
        rope: tuple[torch.Tensor, torch.Tensor],
    ) -> torch.Tensor:
        """x [B, N, D]; e0 [B, 6, D] the time projection; context [B, L, D] the embedded text."""
        shift_a, scale_a, gate_a, shift_f, scale_f, gate_f = (self.modulation + e0).chunk(6, dim=1)
        y = modulate(layer_norm(x, self.eps), shift_a, scale_a)
        x = x + self.self_attn(y, y, rope) * gate_a
        x = x + self.cross_attn(self.norm3(x), context)
        y = modulate(layer_norm(x, self.eps), shift_f, scale_f)
        return x + self.ffn(y) * gate_f


class Head(nn.Module):
    """The output head: ``head`` Linear D → C·pt·ph·pw on the LayerNorm of x modulated by
    ``modulation`` [1, 2, D] plus the time embedding e (before its SiLU, as in Wan)."""

    def __init__(self, config: Wan21Config) -> None:
        super().__init__()
        self.eps = config.eps
        self.head = nn.Linear(config.dim, config.patch_values)
        self.modulation = nn.Parameter(torch.randn(1, 2, config.dim) / math.sqrt(config.dim))

    def forward(self, x: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
        """x [B, N, D], e [B, D] → [B, N, P] with P ordered (pt, ph, pw, C)."""
        shift, scale = (self.modulation + e.unsqueeze(1)).chunk(2, dim=1)
        return self.head(modulate(layer_norm(x, self.eps), shift, scale))
