"""Writes test/fixtures/wan21-vae-original/tiny.safetensors: decoder weights (Wan's names, F32), a
latent and the frames the original Wan2.1 code decodes from it, at ``TINY`` (the published
structure, 2 residual blocks per stage, at base width 4 with uneven multipliers; the config is in
the file's metadata as the TS ``WanVaeConfig``). Needs a checkout of Wan-Video/Wan2.1 (its
``wan/modules/vae.py``) and einops; the Wan code is imported from that checkout, never copied here.

    .venv/bin/python python/tests/torch/make_vae_original_vectors.py --wan-repo /path/to/Wan2.1

The decode is Wan's ``WanVAE_.decode(z, scale=[mean, 1/std])`` (the frame-by-frame feat_cache
loop) in float64, unclamped; its ``Upsample`` rounds activations through float32 (its bfloat16
fix), so the vectors hold to ~1e-7, not to float64 rounding.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import torch
from safetensors.torch import save_file

from flowfleet.torch import WAN21_VAE, random_vae_weights

REPO = Path(__file__).resolve().parents[3]
OUT = REPO / "test/fixtures/wan21-vae-original/tiny.safetensors"
TINY = WAN21_VAE.with_overrides(
    name="wan2.1-vae-tiny",
    z_dim=4,
    base_dim=4,
    dim_mult=(1, 2, 3, 4),
    latents_mean=(-0.5, 0.25, 0.9, -0.1),
    latents_std=(2.5, 1.25, 0.8, 1.9),
)
LATENT = (1, TINY.z_dim, 3, 2, 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wan-repo", required=True, type=Path)
    args = parser.parse_args()
    spec = importlib.util.spec_from_file_location("wan_vae", args.wan_repo / "wan/modules/vae.py")
    assert spec is not None and spec.loader is not None
    wan = importlib.util.module_from_spec(spec)
    sys.modules["wan_vae"] = wan
    spec.loader.exec_module(wan)

    cfg = TINY
    model = wan.WanVAE_(
        dim=cfg.base_dim,
        z_dim=cfg.z_dim,
        dim_mult=list(cfg.dim_mult),
        num_res_blocks=cfg.num_res_blocks,
        attn_scales=[],
        temperal_downsample=list(reversed(cfg.temporal_upsample)),
        dropout=0.0,
    ).double()
    weights = random_vae_weights(cfg, 7)
    missing, unexpected = model.load_state_dict(weights, strict=False)
    assert not unexpected and all(k.startswith(("encoder.", "conv1.")) for k in missing)
    # Stored as float32, so decode the float32 values.
    latent = torch.randn(LATENT, generator=torch.Generator().manual_seed(11)).double()
    mean = torch.tensor(cfg.latents_mean, dtype=torch.float64)
    std = torch.tensor(cfg.latents_std, dtype=torch.float64)
    with torch.no_grad():
        frames = model.eval().decode(latent, [mean, 1.0 / std])
    OUT.parent.mkdir(parents=True, exist_ok=True)
    save_file(
        {**weights, "latent": latent.float().contiguous(), "frames": frames.float().contiguous()},
        str(OUT),
        metadata={"config": json.dumps(cfg.to_ts()), "source": "Wan-Video/Wan2.1 wan/modules/vae.py"},
    )
    print(f"{OUT}: latent {list(latent.shape)} → frames {list(frames.shape)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
