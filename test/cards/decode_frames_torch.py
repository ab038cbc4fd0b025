"""Decodes final latents with flowfleet.torch's Wan2.1 VAE decoder (the PyTorch twin of the
worker's) and quantises the frames as diffusers' VideoProcessor does, for pixels-fleet.test.ts.

Usage: decode_frames_torch.py CONFIG_NAME WEIGHTS.safetensors LATENTS.safetensors OUT.safetensors
LATENTS holds ``latents`` [G, z, F, h, w]; OUT gets ``frames`` uint8 [G, 1 + 4(F − 1), H, W, 3].
"""

import sys

import torch
from safetensors.torch import load_file, save_file

from flowfleet.torch import WAN21_VAE, WAN21_VAE_MINI, load_vae_decoder

config = {"mini": WAN21_VAE_MINI, "published": WAN21_VAE}[sys.argv[1]]
decoder = load_vae_decoder(sys.argv[2], config)
latents = load_file(sys.argv[3])["latents"]
with torch.no_grad():
    video = decoder.decode(latents)  # [G, 3, F', H, W] in [−1, 1]
# diffusers VideoProcessor.postprocess_video: (v / 2 + 0.5).clamp(0, 1), then numpy's round of ·255.
rgb = ((video / 2 + 0.5).clamp(0, 1) * 255).round().to(torch.uint8)
save_file({"frames": rgb.permute(0, 2, 3, 4, 1).contiguous()}, sys.argv[4])
