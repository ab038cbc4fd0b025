"""Writes a Wan2.1 VAE decoder checkpoint with random weights in a published layout:

    python -m flowfleet.torch.vae_random_checkpoint --layout diffusers --out DIR   # DIR/vae/…
    python -m flowfleet.torch.vae_random_checkpoint --layout wan --out Wan2.1_VAE.safetensors

The published config in BF16 is 108 tensors, 147 MB. Prints ``{"path", "tensors", "bytes"}``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

import torch

from .vae_checkpoint import random_vae_weights, write_vae_checkpoint
from .vae_config import WAN21_VAE, WAN21_VAE_MINI, decoder_parameters

CONFIGS = {c.name: c for c in (WAN21_VAE, WAN21_VAE_MINI)}
DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m flowfleet.torch.vae_random_checkpoint",
        description="Write a Wan2.1 VAE decoder checkpoint with random weights in a published layout.",
    )
    parser.add_argument("--layout", choices=["wan", "diffusers"], required=True)
    parser.add_argument(
        "--out", required=True, help="wan: the .safetensors file; diffusers: the pipeline directory"
    )
    parser.add_argument("--config", choices=sorted(CONFIGS), default=WAN21_VAE.name)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="BF16")
    args = parser.parse_args(argv)
    config = CONFIGS[args.config]
    weights = random_vae_weights(config, args.seed)
    path = write_vae_checkpoint(args.out, args.layout, weights, config, DTYPES[args.dtype])
    print(
        json.dumps(
            {"path": str(path), "tensors": len(decoder_parameters(config)), "bytes": path.stat().st_size}
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
