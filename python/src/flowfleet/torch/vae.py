"""The Wan2.1 VAE decoder as a torch ``nn.Module`` whose ``state_dict()`` carries Wan's names.

Architecture (Wan2.1's ``Decoder3d`` behind ``WanVAE_.conv2``): a 1×1×1 conv on the latent
(``conv2``, diffusers' ``post_quant_conv``), a causal 3×3×3 conv to the middle width, the middle
block (residual, single-head spatial attention per frame, residual), upsampling stages of
residual blocks each followed by a 2× nearest upsample + 3×3 conv that halves the width (and, in
the temporal stages, a causal (3, 1, 1) ``time_conv`` to twice the width whose two halves become
two frames), then RMS norm, SiLU and a causal conv to RGB. Norms are Wan's ``RMS_norm``:
``F.normalize`` over channels · √C · gamma. Causal convs pad two zero frames in front, none behind.

How time is handled is the only difference between the three decodes here, all equal:

- :meth:`Wan21VaeDecoder.decode` — the original's rule: one latent frame per call of the decoder,
  each causal conv keeping up to ``CACHE_T = 2`` frames of its input from the previous call, and
  each temporal upsampling skipping its ``time_conv`` on the first call (the first latent frame
  becomes one frame; every later one becomes 2 per temporal stage: T frames → 1 + 4(T − 1));
- :meth:`Wan21VaeDecoder.decode_step` — the same rule with fixed-shape caches (two frames per
  causal conv, zeros before the first frame): the worker graph's contract, one latent frame a call;
- :meth:`Wan21VaeDecoder.decode_clip` — the whole clip at once: every causal conv over all frames,
  and each ``time_conv`` over the frames after the first (which passes through unchanged).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import FlowfleetError
from .vae_config import WAN21_VAE, WanVaeConfig

#: Frames of its input a causal conv keeps for the next call (its temporal kernel − 1).
CACHE_T = 2


def _interleave_halves(y: torch.Tensor) -> torch.Tensor:
    """[B, 2C, t, H, W] → [B, C, 2t, H, W]: channels [0, C) are each frame's first output frame."""
    b, c2, t, h, w = y.shape
    return y.view(b, 2, c2 // 2, t, h, w).permute(0, 2, 3, 1, 4, 5).reshape(b, c2 // 2, 2 * t, h, w)


def _pad_front(x: torch.Tensor, frames: int) -> torch.Tensor:
    return F.pad(x, (0, 0, 0, 0, frames, 0)) if frames > 0 else x


class _Time:
    """How the causal convs and temporal upsamplings see past frames; one slot per such layer,
    visited in forward order (``start`` rewinds to the first slot before each call)."""

    def __init__(self) -> None:
        self.slot = 0

    def start(self) -> None:
        self.slot = 0

    def _next(self) -> int:
        self.slot += 1
        return self.slot - 1

    def causal(self, x: torch.Tensor) -> torch.Tensor:
        """x [B, C, t, H, W] with CACHE_T earlier frames (cached or zero) in front."""
        raise NotImplementedError

    def upsample(self, x: torch.Tensor, conv: nn.Conv3d) -> torch.Tensor:
        """The temporal upsampling of x with ``time_conv`` = ``conv``."""
        raise NotImplementedError


class _WholeClip(_Time):
    def causal(self, x: torch.Tensor) -> torch.Tensor:
        return _pad_front(x, CACHE_T)

    def upsample(self, x: torch.Tensor, conv: nn.Conv3d) -> torch.Tensor:
        if x.shape[2] == 1:
            return x
        later = _interleave_halves(conv(_pad_front(x[:, :, 1:], CACHE_T)))
        return torch.cat([x[:, :, :1], later], dim=2)


_REP = "Rep"  # the original's marker: this upsampling has passed its first frame through


class _OriginalCache(_Time):
    """Wan2.1's ``feat_cache`` rule, step for step: a slot holds the last ≤ 2 frames of the
    layer's input (a one-frame call keeps the previous call's last frame too); a cold slot means
    zero padding; an upsampling's first call only marks its slot, the next pads with zeros and
    caches a zero frame before its own."""

    def __init__(self) -> None:
        super().__init__()
        self.slots: list[torch.Tensor | str | None] = []

    def _slot(self) -> int:
        i = self._next()
        if i == len(self.slots):
            self.slots.append(None)
        return i

    def causal(self, x: torch.Tensor) -> torch.Tensor:
        i = self._slot()
        prev = self.slots[i]
        keep = x[:, :, -CACHE_T:]
        if isinstance(prev, torch.Tensor):
            if keep.shape[2] < CACHE_T:
                keep = torch.cat([prev[:, :, -1:], keep], dim=2)
            x = torch.cat([prev, x], dim=2)
            out = _pad_front(x, CACHE_T - prev.shape[2])
        else:
            out = _pad_front(x, CACHE_T)
        self.slots[i] = keep.clone()
        return out

    def upsample(self, x: torch.Tensor, conv: nn.Conv3d) -> torch.Tensor:
        i = self._slot()
        prev = self.slots[i]
        if prev is None:
            self.slots[i] = _REP
            return x
        keep = x[:, :, -CACHE_T:]
        if keep.shape[2] < CACHE_T:
            before = prev[:, :, -1:] if isinstance(prev, torch.Tensor) else torch.zeros_like(keep)
            keep = torch.cat([before, keep], dim=2)
        if isinstance(prev, torch.Tensor):
            y = conv(_pad_front(torch.cat([prev, x], dim=2), CACHE_T - prev.shape[2]))
        else:
            y = conv(_pad_front(x, CACHE_T))
        self.slots[i] = keep.clone()
        return _interleave_halves(y)


class _FixedCache(_Time):
    """Fixed-shape caches: slot i is always [B, C_i, 2, H_i, W_i], zeros before the first frame."""

    def __init__(self, cache: list[torch.Tensor] | None) -> None:
        super().__init__()
        self.first = cache is None
        self.cache = [] if cache is None else list(cache)
        self.out: list[torch.Tensor] = []

    def _take(self, x: torch.Tensor) -> torch.Tensor:
        i = self._next()
        if self.first:
            b, c, _, h, w = x.shape
            return x.new_zeros(b, c, CACHE_T, h, w)
        if i >= len(self.cache):
            raise FlowfleetError(
                "MODEL_INPUT_INVALID", "too few cache tensors", {"input": "cache", "slot": i}
            )
        cached = self.cache[i]
        if cached.shape[:2] != x.shape[:2] or cached.shape[2] != CACHE_T or cached.shape[3:] != x.shape[3:]:
            raise FlowfleetError(
                "MODEL_INPUT_INVALID",
                "a cache tensor does not fit its layer",
                {"input": "cache", "slot": i, "dims": list(cached.shape), "frame": list(x.shape)},
            )
        return cached.to(x.dtype)

    def causal(self, x: torch.Tensor) -> torch.Tensor:
        full = torch.cat([self._take(x), x], dim=2)
        self.out.append(full[:, :, -CACHE_T:])
        return full

    def upsample(self, x: torch.Tensor, conv: nn.Conv3d) -> torch.Tensor:
        cached = self._take(x)
        if self.first:
            self.out.append(cached)
            return x
        full = torch.cat([cached, x], dim=2)
        self.out.append(full[:, :, -CACHE_T:])
        return _interleave_halves(conv(full))


class RMSNorm(nn.Module):
    """Wan's ``RMS_norm``: ``F.normalize`` over channels (dim 1) · √C · gamma; gamma is
    [C, 1, 1, 1] on video ([C, 1, 1] on per-frame images), as in the checkpoints."""

    def __init__(self, dim: int, images: bool = False) -> None:
        super().__init__()
        self.scale = math.sqrt(dim)
        self.gamma = nn.Parameter(torch.ones((dim, 1, 1) if images else (dim, 1, 1, 1)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(x, dim=1) * self.scale * self.gamma


class CausalConv3d(nn.Conv3d):
    """A 3D conv whose temporal padding (two frames in front) comes from a :class:`_Time`;
    spatial padding is symmetric zeros."""

    def __init__(self, cin: int, cout: int, kernel: tuple[int, int, int]) -> None:
        super().__init__(cin, cout, kernel, padding=(0, kernel[1] // 2, kernel[2] // 2))

    def causal(self, x: torch.Tensor, time: _Time) -> torch.Tensor:
        return super().forward(time.causal(x))


class ResidualBlock(nn.Module):
    """x + residual(x): [norm, SiLU, conv, norm, SiLU, dropout, conv] (Wan's indices 0–6),
    with a 1×1×1 ``shortcut`` when the width changes."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.residual = nn.ModuleList(
            [
                RMSNorm(cin),
                nn.SiLU(),
                CausalConv3d(cin, cout, (3, 3, 3)),
                RMSNorm(cout),
                nn.SiLU(),
                nn.Identity(),  # Wan's dropout (0.0)
                CausalConv3d(cout, cout, (3, 3, 3)),
            ]
        )
        self.shortcut = nn.Conv3d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x: torch.Tensor, time: _Time) -> torch.Tensor:
        norm1, act, conv1, norm2, _, _, conv2 = self.residual
        h = cast(CausalConv3d, conv1).causal(act(norm1(x)), time)
        h = cast(CausalConv3d, conv2).causal(act(norm2(h)), time)
        return h + self.shortcut(x)


class AttentionBlock(nn.Module):
    """Single-head self-attention over each frame's H·W positions (no mixing across frames)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = RMSNorm(dim, images=True)
        self.to_qkv = nn.Conv2d(dim, 3 * dim, 1)
        self.proj = nn.Conv2d(dim, dim, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, t, h, w = x.shape
        frames = x.permute(0, 2, 1, 3, 4).reshape(b * t, c, h, w)
        qkv = self.to_qkv(self.norm(frames)).flatten(2).transpose(1, 2)  # [b·t, h·w, 3c]
        q, k, v = qkv.chunk(3, dim=-1)
        scores = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(c)
        out = torch.matmul(torch.softmax(scores, dim=-1), v)  # [b·t, h·w, c]
        out = self.proj(out.transpose(1, 2).reshape(b * t, c, h, w))
        return x + out.view(b, t, c, h, w).permute(0, 2, 1, 3, 4)


class Resample(nn.Module):
    """Upsampling: optionally the temporal ``time_conv`` (C → 2C: two frames per frame), then per
    frame a 2× nearest upsample and a 3×3 conv C → C/2 (``resample.1``)."""

    def __init__(self, dim: int, temporal: bool) -> None:
        super().__init__()
        self.resample = nn.ModuleList(
            [nn.Upsample(scale_factor=2.0, mode="nearest-exact"), nn.Conv2d(dim, dim // 2, 3, padding=1)]
        )
        self.time_conv = CausalConv3d(dim, 2 * dim, (3, 1, 1)) if temporal else None

    def forward(self, x: torch.Tensor, time: _Time) -> torch.Tensor:
        if self.time_conv is not None:
            x = time.upsample(x, self.time_conv)
        b, c, t, h, w = x.shape
        upsample, conv = self.resample
        frames = conv(upsample(x.permute(0, 2, 1, 3, 4).reshape(b * t, c, h, w)))
        return frames.view(b, t, c // 2, 2 * h, 2 * w).permute(0, 2, 1, 3, 4)


class Decoder3d(nn.Module):
    """Wan's ``Decoder3d``: ``conv1``, ``middle``, ``upsamples`` (flat), ``head``."""

    def __init__(self, config: WanVaeConfig) -> None:
        super().__init__()
        dims = config.decoder_dims
        self.conv1 = CausalConv3d(config.z_dim, dims[0], (3, 3, 3))
        self.middle = nn.ModuleList(
            [ResidualBlock(dims[0], dims[0]), AttentionBlock(dims[0]), ResidualBlock(dims[0], dims[0])]
        )
        layers: list[nn.Module] = []
        for stage, cout in enumerate(dims[1:]):
            cin = dims[stage] // 2 if stage > 0 else dims[stage]
            for _ in range(config.num_res_blocks + 1):
                layers.append(ResidualBlock(cin, cout))
                cin = cout
            if stage < len(config.temporal_upsample):
                layers.append(Resample(cout, config.temporal_upsample[stage]))
        self.upsamples = nn.ModuleList(layers)
        self.head = nn.ModuleList(
            [RMSNorm(dims[-1]), nn.SiLU(), CausalConv3d(dims[-1], config.out_channels, (3, 3, 3))]
        )

    def forward(self, x: torch.Tensor, time: _Time) -> torch.Tensor:
        time.start()
        x = self.conv1.causal(x, time)
        first, attention, second = self.middle
        x = second(attention(first(x, time)), time)
        for layer in self.upsamples:
            x = layer(x, time)
        norm, act, conv = self.head
        return cast(CausalConv3d, conv).causal(act(norm(x)), time)


@dataclass(frozen=True)
class VaeCache:
    """The decoder's state between latent frames: one [B, C_i, 2, H_i, W_i] tensor per causal
    conv and temporal upsampling, in forward order (the worker graph's cache inputs/outputs)."""

    tensors: tuple[torch.Tensor, ...]


class Wan21VaeDecoder(nn.Module):
    """The Wan2.1 VAE decoder with ``conv2``; its state_dict names and shapes are exactly
    :func:`~flowfleet.torch.vae_config.decoder_parameters` (Wan's vocabulary). Latents in are
    the DiT's (normalised); frames out are RGB in [−1, 1] (clamped, as both pipelines do)."""

    latents_mean: torch.Tensor
    latents_std: torch.Tensor

    def __init__(self, config: WanVaeConfig = WAN21_VAE) -> None:
        super().__init__()
        self.config = config
        self.conv2 = nn.Conv3d(config.z_dim, config.z_dim, 1)
        self.decoder = Decoder3d(config)
        self.register_buffer(
            "latents_mean",
            torch.tensor(config.latents_mean, dtype=torch.float64).view(1, -1, 1, 1, 1),
            persistent=False,
        )
        self.register_buffer(
            "latents_std",
            torch.tensor(config.latents_std, dtype=torch.float64).view(1, -1, 1, 1, 1),
            persistent=False,
        )

    def _check(self, latent: torch.Tensor) -> torch.Tensor:
        if latent.dim() != 5 or latent.shape[1] != self.config.z_dim or latent.shape[2] < 1:
            raise FlowfleetError(
                "MODEL_INPUT_INVALID",
                f"latent must be [B, {self.config.z_dim}, T ≥ 1, H, W]",
                {"input": "latent", "dims": list(latent.shape)},
            )
        return latent.to(self.conv2.weight.dtype)

    def denormalize(self, latent: torch.Tensor) -> torch.Tensor:
        """z·std + mean per channel: the DiT's latent as the decoder expects it (Wan's
        ``z / scale[1] + scale[0]`` with scale = [mean, 1/std]; diffusers' pipelines the same)."""
        return latent * self.latents_std.to(latent.dtype) + self.latents_mean.to(latent.dtype)

    def _finish(self, frames: torch.Tensor, clamp: bool) -> torch.Tensor:
        return frames.clamp(-1.0, 1.0) if clamp else frames

    def decode(self, latent: torch.Tensor, *, clamp: bool = True) -> torch.Tensor:
        """[B, z, T, h, w] → [B, 3, 1 + 4(T − 1), 8h, 8w], one latent frame at a time with the
        original's cache rule. Raises ``MODEL_INPUT_INVALID`` for a latent of other dims."""
        x = self.conv2(self.denormalize(self._check(latent)))
        time = _OriginalCache()
        out = [self.decoder(x[:, :, i : i + 1], time) for i in range(x.shape[2])]
        return self._finish(torch.cat(out, dim=2), clamp)

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        return self.decode(latent)

    def decode_clip(self, latent: torch.Tensor, *, clamp: bool = True) -> torch.Tensor:
        """The same frames as :meth:`decode`, all latent frames in one pass."""
        x = self.conv2(self.denormalize(self._check(latent)))
        return self._finish(self.decoder(x, _WholeClip()), clamp)

    def decode_step(
        self, latent_frame: torch.Tensor, cache: VaeCache | None = None, *, clamp: bool = True
    ) -> tuple[torch.Tensor, VaeCache]:
        """One latent frame [B, z, 1, h, w] → its frames (1 for the first, ``temporal_factor``
        after) and the cache for the next; ``cache`` None starts a clip. Raises
        ``MODEL_INPUT_INVALID`` for a frame or a cache of the wrong dims."""
        latent_frame = self._check(latent_frame)
        if latent_frame.shape[2] != 1:
            raise FlowfleetError(
                "MODEL_INPUT_INVALID",
                "decode_step takes one latent frame",
                {"dims": list(latent_frame.shape)},
            )
        time = _FixedCache(None if cache is None else list(cache.tensors))
        frames = self.decoder(self.conv2(self.denormalize(latent_frame)), time)
        if not time.first and len(time.cache) != len(time.out):
            raise FlowfleetError(
                "MODEL_INPUT_INVALID",
                "too many cache tensors",
                {"given": len(time.cache), "expected": len(time.out)},
            )
        return self._finish(frames, clamp), VaeCache(tuple(time.out))
