"""Hyper-parameters of a Wan2.1-structured VAE decoder and its parameter list in both published
vocabularies.

The published Wan2.1 VAE (``Wan2.1_VAE.pth``, diffusers' ``AutoencoderKLWan``): z_dim 16, base
width 96, multipliers 1/2/4/4, two residual blocks per encoder stage (three per decoder stage),
no attention outside the middle block, temporal upsampling in the first two decoder stages, and
the per-channel latent statistics a pipeline applies before decoding (z·std + mean).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, NamedTuple

from ..errors import FlowfleetError

#: The per-channel latent mean of the published VAE (Wan's ``WanVAE.mean``, diffusers' ``latents_mean``).
WAN21_LATENTS_MEAN = (
    -0.7571, -0.7089, -0.9113, 0.1075, -0.1745, 0.9653, -0.1517, 1.5508,
    0.4134, -0.0715, 0.5517, -0.3632, -0.1922, -0.9497, 0.2503, -0.2921,
)  # fmt: skip
#: The per-channel latent std of the published VAE (Wan's ``WanVAE.std``, diffusers' ``latents_std``).
WAN21_LATENTS_STD = (
    2.8184, 1.4541, 2.3275, 2.6558, 1.2196, 1.7708, 2.6052, 2.0743,
    3.2687, 2.1526, 2.8652, 1.5579, 1.6382, 1.1253, 2.8251, 1.9160,
)  # fmt: skip


def _invalid(message: str, field: str) -> FlowfleetError:
    return FlowfleetError("MODEL_CONFIG_INVALID", message, {"field": field})


@dataclass(frozen=True)
class WanVaeConfig:
    """One Wan2.1-structured VAE decoder. Field names follow diffusers' ``AutoencoderKLWan``
    config (snake_case); ``temporal_upsample`` is in decoder order (Wan's
    ``temperal_downsample[::-1]``)."""

    name: str
    #: Latent channels.
    z_dim: int
    #: Base width; stage widths are base_dim·m.
    base_dim: int
    #: Width multipliers of the encoder stages (the decoder runs them reversed).
    dim_mult: tuple[int, ...]
    #: Residual blocks per encoder stage; each decoder stage has one more.
    num_res_blocks: int
    #: Per decoder stage boundary (len(dim_mult) − 1): whether that upsampling doubles frames too.
    temporal_upsample: tuple[bool, ...]
    #: Output (pixel) channels.
    out_channels: int
    #: Per-channel latent statistics: the decoder sees z·std + mean.
    latents_mean: tuple[float, ...]
    latents_std: tuple[float, ...]

    def __post_init__(self) -> None:
        validate(self)

    @property
    def decoder_dims(self) -> list[int]:
        """Widths [middle, stage 0 out, stage 1 out, …]: base·[m_last, m_last, …, m_0]."""
        return [self.base_dim * m for m in (self.dim_mult[-1], *reversed(self.dim_mult))]

    @property
    def spatial_factor(self) -> int:
        """Pixels per latent position along height and width (8 for Wan2.1)."""
        return 2 ** (len(self.dim_mult) - 1)

    @property
    def temporal_factor(self) -> int:
        """Frames each latent frame after the first becomes (4 for Wan2.1)."""
        return 2 ** sum(self.temporal_upsample)

    def frames_for(self, latent_frames: int) -> int:
        """1 + 4(T − 1) for Wan2.1: the first latent frame decodes to one frame."""
        return 1 + self.temporal_factor * (latent_frames - 1)

    def with_overrides(self, **overrides: Any) -> WanVaeConfig:
        """A validated copy with some fields replaced."""
        for key in ("dim_mult", "temporal_upsample", "latents_mean", "latents_std"):
            if key in overrides:
                overrides[key] = tuple(overrides[key])
        return replace(self, **overrides)

    def to_ts(self) -> dict[str, Any]:
        """The config as the TS ``WanVaeConfig`` object (camelCase keys)."""
        return {_camel(f.name): _plain(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_ts(cls, data: Mapping[str, Any]) -> WanVaeConfig:
        """Reads a TS ``WanVaeConfig`` object (camelCase keys, every field present)."""
        values = {f.name: data[_camel(f.name)] for f in fields(cls)}
        for key in ("dim_mult", "temporal_upsample", "latents_mean", "latents_std"):
            values[key] = tuple(values[key])
        return cls(**values)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def validate(config: WanVaeConfig) -> WanVaeConfig:
    """Structural checks. Raises :class:`FlowfleetError` ``MODEL_CONFIG_INVALID`` naming the field."""
    for field in ("z_dim", "base_dim", "num_res_blocks", "out_channels"):
        if not _positive_int(getattr(config, field)):
            raise _invalid(f"{field} must be a positive integer", field)
    if len(config.dim_mult) < 2 or not all(_positive_int(m) for m in config.dim_mult):
        raise _invalid("dim_mult must be at least two positive integers", "dim_mult")
    if len(config.temporal_upsample) != len(config.dim_mult) - 1 or not all(
        isinstance(t, bool) for t in config.temporal_upsample
    ):
        raise _invalid(
            "temporal_upsample must hold one bool per upsampling (len(dim_mult) − 1)", "temporal_upsample"
        )
    # Each upsampling's 2D conv halves the width it receives (Wan2.1's Resample: dim → dim // 2).
    if any(d % 2 for d in config.decoder_dims[1:-1]):
        raise _invalid("every upsampled stage width base_dim·m must be even", "base_dim")
    for field in ("latents_mean", "latents_std"):
        values = getattr(config, field)
        if len(values) != config.z_dim or not all(isinstance(v, (int, float)) for v in values):
            raise _invalid(f"{field} must hold z_dim numbers", field)
    if not all(v > 0 for v in config.latents_std):
        raise _invalid("latents_std must be positive", "latents_std")
    return config


class VaeParameter(NamedTuple):
    """One decoder tensor: Wan's state_dict name (the card's), diffusers' name, and its shape."""

    wan: str
    diffusers: str
    shape: tuple[int, ...]


def _conv(wan: str, diffusers: str, cout: int, cin: int, kernel: tuple[int, ...]) -> list[VaeParameter]:
    return [
        VaeParameter(f"{wan}.weight", f"{diffusers}.weight", (cout, cin, *kernel)),
        VaeParameter(f"{wan}.bias", f"{diffusers}.bias", (cout,)),
    ]


def _norm(wan: str, diffusers: str, dim: int, images: bool = False) -> list[VaeParameter]:
    # Wan's RMS_norm keeps gamma broadcastable over (t, h, w), or (h, w) for images.
    shape = (dim, 1, 1) if images else (dim, 1, 1, 1)
    return [VaeParameter(f"{wan}.gamma", f"{diffusers}.gamma", shape)]


def _residual(wan: str, diffusers: str, cin: int, cout: int) -> list[VaeParameter]:
    out = [
        *_norm(f"{wan}.residual.0", f"{diffusers}.norm1", cin),
        *_conv(f"{wan}.residual.2", f"{diffusers}.conv1", cout, cin, (3, 3, 3)),
        *_norm(f"{wan}.residual.3", f"{diffusers}.norm2", cout),
        *_conv(f"{wan}.residual.6", f"{diffusers}.conv2", cout, cout, (3, 3, 3)),
    ]
    if cin != cout:
        out += _conv(f"{wan}.shortcut", f"{diffusers}.conv_shortcut", cout, cin, (1, 1, 1))
    return out


def decoder_parameters(config: WanVaeConfig) -> list[VaeParameter]:
    """Every decoder tensor in forward order: ``conv2`` (diffusers' ``post_quant_conv``) and the
    ``decoder.*`` tensors, named as Wan's ``WanVAE_`` state_dict and diffusers' ``AutoencoderKLWan``
    name them. The encoder's tensors (and ``conv1`` / ``quant_conv``) are not the decoder's."""
    z, dims = config.z_dim, config.decoder_dims
    middle = dims[0]
    params = [
        *_conv("conv2", "post_quant_conv", z, z, (1, 1, 1)),
        *_conv("decoder.conv1", "decoder.conv_in", middle, z, (3, 3, 3)),
        *_residual("decoder.middle.0", "decoder.mid_block.resnets.0", middle, middle),
        *_norm("decoder.middle.1.norm", "decoder.mid_block.attentions.0.norm", middle, images=True),
        *_conv(
            "decoder.middle.1.to_qkv", "decoder.mid_block.attentions.0.to_qkv", 3 * middle, middle, (1, 1)
        ),
        *_conv("decoder.middle.1.proj", "decoder.mid_block.attentions.0.proj", middle, middle, (1, 1)),
        *_residual("decoder.middle.2", "decoder.mid_block.resnets.1", middle, middle),
    ]
    index = 0  # Wan numbers the decoder's upsamples list flat: blocks and resamples alike.
    for stage, cout in enumerate(dims[1:]):
        cin = dims[stage] // 2 if stage > 0 else dims[stage]
        for block in range(config.num_res_blocks + 1):
            params += _residual(
                f"decoder.upsamples.{index}", f"decoder.up_blocks.{stage}.resnets.{block}", cin, cout
            )
            cin = cout
            index += 1
        if stage < len(config.temporal_upsample):
            wan, diffusers = f"decoder.upsamples.{index}", f"decoder.up_blocks.{stage}.upsamplers.0"
            params += _conv(f"{wan}.resample.1", f"{diffusers}.resample.1", cout // 2, cout, (3, 3))
            if config.temporal_upsample[stage]:
                params += _conv(f"{wan}.time_conv", f"{diffusers}.time_conv", 2 * cout, cout, (3, 1, 1))
            index += 1
    last = dims[-1]
    params += _norm("decoder.head.0", "decoder.norm_out", last)
    params += _conv("decoder.head.2", "decoder.conv_out", config.out_channels, last, (3, 3, 3))
    return params


def parameter_count(config: WanVaeConfig) -> int:
    """Number of scalar parameters of the decoder (with ``conv2``)."""
    total = 0
    for p in decoder_parameters(config):
        n = 1
        for d in p.shape:
            n *= d
        total += n
    return total


#: The published Wan2.1 VAE's decoder (73.3 M parameters in 108 tensors).
WAN21_VAE = WanVaeConfig(
    name="wan2.1-vae",
    z_dim=16,
    base_dim=96,
    dim_mult=(1, 2, 4, 4),
    num_res_blocks=2,
    temporal_upsample=(True, True, False),
    out_channels=3,
    latents_mean=WAN21_LATENTS_MEAN,
    latents_std=WAN21_LATENTS_STD,
)

#: A reduced decoder of the same structure for tests: uneven multipliers so that three of the
#: four stages change width (shortcut convs) and every resample halves a different width.
WAN21_VAE_MINI = WanVaeConfig(
    name="wan2.1-vae-mini",
    z_dim=4,
    base_dim=8,
    dim_mult=(1, 2, 3, 4),
    num_res_blocks=1,
    temporal_upsample=(True, True, False),
    out_channels=3,
    latents_mean=(-0.5, 0.25, 0.9, -0.1),
    latents_std=(2.5, 1.25, 0.8, 1.9),
)
