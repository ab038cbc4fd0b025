"""Hyper-parameters of a wan21-structured model (DiT + toy byte-level text encoder).

A port of ``packages/models/src/wan21/wan21-config.ts``: the same fields (snake_case here), the same
presets and the same structural checks, so a config that the fleet accepts is accepted here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from ..errors import FlowfleetError

#: The pad token id of the byte tokenizer (256 bytes + this id make the vocabulary).
PAD_TOKEN = 256


def _invalid(message: str, field: str) -> FlowfleetError:
    return FlowfleetError("MODEL_CONFIG_INVALID", message, {"field": field})


@dataclass(frozen=True)
class Wan21Config:
    """One wan21 card's architecture; field docs follow ``Wan21Config`` in the TS spec."""

    name: str
    #: Latent channels C fed to the DiT (``out_channels`` is always the same).
    in_channels: int
    out_channels: int
    #: Patch size (pt, ph, pw) of the Conv3d patch embedding.
    patch: tuple[int, int, int]
    #: Model width D.
    dim: int
    #: Hidden width of each block's FFN.
    ffn_dim: int
    #: Length of the sinusoidal timestep embedding.
    freq_dim: int
    #: Attention heads; head dim d = dim / heads.
    heads: int
    #: Number of transformer blocks.
    layers: int
    #: Width of the context the text encoder emits and the DiT consumes.
    text_dim: int
    #: Tokens per prompt L.
    text_len: int
    #: Vocabulary of the byte tokenizer (≥ 257).
    text_vocab: int
    #: Hidden width of the text encoder's MLP.
    text_hidden: int
    #: LayerNorm and RMSNorm epsilon.
    eps: float

    def __post_init__(self) -> None:
        validate(self)

    @property
    def head_dim(self) -> int:
        """Head dim d = dim / heads."""
        return self.dim // self.heads

    @property
    def patch_values(self) -> int:
        """Values per patch token P = C·pt·ph·pw."""
        pt, ph, pw = self.patch
        return self.out_channels * pt * ph * pw

    def with_overrides(self, **overrides: Any) -> Wan21Config:
        """A validated copy with some fields replaced (``out_channels`` follows ``in_channels``)."""
        if "in_channels" in overrides and "out_channels" not in overrides:
            overrides["out_channels"] = overrides["in_channels"]
        if "patch" in overrides:
            overrides["patch"] = tuple(overrides["patch"])
        return replace(self, **overrides)

    def to_ts(self) -> dict[str, Any]:
        """The config as the TS ``Wan21Config`` object (camelCase keys)."""
        return {_camel(f.name): _plain(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_ts(cls, data: Mapping[str, Any]) -> Wan21Config:
        """Reads a TS ``Wan21Config`` object (camelCase keys, every field present)."""
        values = {f.name: data[_camel(f.name)] for f in fields(cls)}
        values["patch"] = tuple(values["patch"])
        return cls(**values)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def validate(config: Wan21Config) -> Wan21Config:
    """The TS ``validateWan21Config`` checks.

    Raises :class:`FlowfleetError` ``MODEL_CONFIG_INVALID`` naming the field."""
    sizes = (
        "in_channels out_channels dim ffn_dim freq_dim heads layers text_dim text_len text_vocab text_hidden"
    ).split()
    for field in sizes:
        value = getattr(config, field)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise _invalid(f"{field} must be a positive integer", field)
    patch = config.patch
    if len(patch) != 3 or not all(isinstance(p, int) and p > 0 for p in patch):
        raise _invalid("patch must be three positive integers", "patch")
    if config.out_channels != config.in_channels:
        raise _invalid("out_channels must equal in_channels", "out_channels")
    if config.dim % config.heads != 0:
        raise _invalid("dim must be divisible by heads", "dim")
    head_dim = config.dim // config.heads
    if head_dim % 2 != 0 or head_dim // 2 // 3 < 1:
        raise _invalid("head dim must be even with at least 3 rotary pairs", "heads")
    if config.freq_dim % 2 != 0:
        raise _invalid("freq_dim must be even", "freq_dim")
    if config.text_vocab < PAD_TOKEN + 1:
        raise _invalid("text_vocab must hold the 256 bytes and the pad id", "text_vocab")
    if not config.eps > 0:
        raise _invalid("eps must be positive", "eps")
    return config


#: The tiny configuration of the ``wan21-mini`` card.
WAN21_MINI = Wan21Config(
    name="wan21-mini",
    in_channels=4,
    out_channels=4,
    patch=(1, 2, 2),
    dim=128,
    ffn_dim=512,
    freq_dim=64,
    heads=4,
    layers=2,
    text_dim=64,
    text_len=16,
    text_vocab=257,
    text_hidden=128,
    eps=1e-6,
)

#: The published Wan2.1-T2V-1.3B DiT sizes (the text encoder stays the toy byte-level one).
WAN21_1_3B = Wan21Config(
    name="wan21-1.3b",
    in_channels=16,
    out_channels=16,
    patch=(1, 2, 2),
    dim=1536,
    ffn_dim=8960,
    freq_dim=256,
    heads=12,
    layers=30,
    text_dim=4096,
    text_len=512,
    text_vocab=257,
    text_hidden=4096,
    eps=1e-6,
)
