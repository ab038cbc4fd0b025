"""Wan2.1 VAE checkpoints in the two published layouts: loading the decoder's tensors by name,
and writing random-weight files at any config (the real weights cannot be fetched here).

- ``wan``: Wan's own ``Wan2.1_VAE.pth`` state_dict names (``conv2.*``, ``decoder.conv1.*``,
  ``decoder.middle.1.to_qkv.*``, ``decoder.upsamples.3.time_conv.*``, …) in a safetensors file;
- ``diffusers``: ``vae/diffusion_pytorch_model.safetensors`` of a diffusers pipeline, with
  ``AutoencoderKLWan`` names (``post_quant_conv.*``, ``decoder.conv_in.*``,
  ``decoder.mid_block.attentions.0.to_qkv.*``, ``decoder.up_blocks.0.upsamplers.0.time_conv.*``, …),
  beside its ``config.json``.

Both published files hold the encoder too; its tensors (``encoder.*``, and ``conv1.*`` /
``quant_conv.*``) are skipped when loading the decoder.

``python -m flowfleet.torch.vae_random_checkpoint`` writes one with random weights.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, Union

import torch
from safetensors.torch import load, load_file, save_file

from ..errors import FlowfleetError
from .vae import Wan21VaeDecoder
from .vae_config import WAN21_VAE, WanVaeConfig, decoder_parameters

Layout = Literal["wan", "diffusers"]
Source = Union[str, "os.PathLike[str]", bytes, Mapping[str, torch.Tensor]]

#: Prefixes of the encoder-side tensors both published files also hold.
ENCODER_PREFIXES = ("encoder.", "conv1.", "quant_conv.")
#: Where a diffusers pipeline keeps the VAE, relative to the pipeline directory.
DIFFUSERS_VAE_FILE = "vae/diffusion_pytorch_model.safetensors"


def _tensors(source: Source) -> Mapping[str, torch.Tensor]:
    if isinstance(source, Mapping):
        return source
    if isinstance(source, bytes):
        return load(source)
    return load_file(os.fspath(source))


def bind_vae_checkpoint(config: WanVaeConfig, tensors: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The decoder's tensors of a checkpoint in either layout (keys may mix them), under Wan's
    names. Raises :class:`FlowfleetError` ``MODEL_WEIGHTS_MISMATCH`` listing every ``missing``
    name, every ``unexpected`` key (unknown, or a second key for one tensor) and every
    ``wrongShape`` (name, source, expected, actual)."""
    params = decoder_parameters(config)
    by_key = {p.wan: p for p in params} | {p.diffusers: p for p in params}
    bound: dict[str, torch.Tensor] = {}
    unexpected: list[str] = []
    wrong: list[dict[str, object]] = []
    for key in sorted(tensors):
        param = by_key.get(key)
        if param is None:
            if not key.startswith(ENCODER_PREFIXES):
                unexpected.append(key)
            continue
        if param.wan in bound:
            unexpected.append(key)
            continue
        value = tensors[key]
        if tuple(value.shape) != param.shape:
            wrong.append(
                {"name": param.wan, "source": key, "expected": list(param.shape), "actual": list(value.shape)}
            )
        bound[param.wan] = value
    missing = [p.wan for p in params if p.wan not in bound]
    if missing or unexpected or wrong:
        raise FlowfleetError(
            "MODEL_WEIGHTS_MISMATCH",
            f"checkpoint does not fit {config.name}: {len(missing)} missing, {len(unexpected)} unexpected, "
            f"{len(wrong)} of the wrong shape",
            {"missing": missing, "unexpected": unexpected, "wrongShape": wrong},
        )
    return bound


def load_vae_decoder(
    source: Source, config: WanVaeConfig = WAN21_VAE, dtype: torch.dtype = torch.float32
) -> Wan21VaeDecoder:
    """A :class:`Wan21VaeDecoder` of ``config`` in ``dtype`` from a checkpoint (a safetensors
    path, its bytes, or a state_dict) in either layout. Raises ``MODEL_WEIGHTS_MISMATCH``
    (see :func:`bind_vae_checkpoint`)."""
    bound = bind_vae_checkpoint(config, _tensors(source))
    module = Wan21VaeDecoder(config).to(dtype)
    module.load_state_dict({k: v.to(dtype) for k, v in bound.items()}, strict=True)
    return module.eval()


def random_vae_weights(config: WanVaeConfig, seed: int) -> dict[str, torch.Tensor]:
    """Random float32 decoder weights under Wan's names: conv weights and biases uniform in
    ±1/√fan_in (torch's conv default), RMS-norm gammas 1 + 0.1·N(0, 1)."""
    gen = torch.Generator().manual_seed(seed)
    out: dict[str, torch.Tensor] = {}
    fan_in = 1
    for p in decoder_parameters(config):
        if p.wan.endswith(".gamma"):
            out[p.wan] = 1 + 0.1 * torch.randn(p.shape, generator=gen)
            continue
        if p.wan.endswith(".weight"):
            fan_in = 1
            for d in p.shape[1:]:
                fan_in *= d
        bound = fan_in**-0.5  # a bias takes its weight's fan-in
        out[p.wan] = (torch.rand(p.shape, generator=gen) * 2 - 1) * bound
    return out


def to_layout(
    config: WanVaeConfig, weights: Mapping[str, torch.Tensor], layout: Layout
) -> dict[str, torch.Tensor]:
    """Wan-named decoder weights renamed to ``layout``."""
    if layout == "wan":
        return dict(weights)
    return {p.diffusers: weights[p.wan] for p in decoder_parameters(config)}


def diffusers_config(config: WanVaeConfig) -> dict[str, object]:
    """The ``config.json`` diffusers writes beside an ``AutoencoderKLWan``'s weights."""
    return {
        "_class_name": "AutoencoderKLWan",
        "base_dim": config.base_dim,
        "z_dim": config.z_dim,
        "dim_mult": list(config.dim_mult),
        "num_res_blocks": config.num_res_blocks,
        "attn_scales": [],
        "temperal_downsample": list(reversed(config.temporal_upsample)),
        "dropout": 0.0,
        "latents_mean": list(config.latents_mean),
        "latents_std": list(config.latents_std),
    }


def write_vae_checkpoint(
    out: str | os.PathLike[str],
    layout: Layout,
    weights: Mapping[str, torch.Tensor],
    config: WanVaeConfig = WAN21_VAE,
    dtype: torch.dtype = torch.bfloat16,
) -> Path:
    """Writes Wan-named ``weights`` in ``layout``: ``wan`` → the file ``out``; ``diffusers`` →
    ``out/vae/diffusion_pytorch_model.safetensors`` and ``out/vae/config.json``. Returns the
    safetensors path."""
    tensors = {k: v.detach().to(dtype).contiguous() for k, v in to_layout(config, weights, layout).items()}
    path = Path(out)
    if layout == "diffusers":
        path = path / DIFFUSERS_VAE_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / "config.json").write_text(json.dumps(diffusers_config(config), indent=2) + "\n")
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(path), metadata={"format": "pt"})
    return path
