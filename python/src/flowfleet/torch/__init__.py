"""flowfleet's PyTorch side (``pip install "flowfleet[torch]"``): the wan21 card's DiT and text
encoder as ``nn.Module``s whose ``state_dict()`` is the fleet's weight set, the byte tokenizer,
the RoPE tables, the per-step velocity with the card's batching and CFG conventions (token ids, or
uploaded text embeddings zero-padded as the worker pads them), published DiT checkpoints, and the
Wan2.1 VAE decoder with its two published checkpoint layouts.
"""

from .config import PAD_TOKEN, WAN21_1_3B, WAN21_MINI, Wan21Config
from .dit import Wan21DiT, timestep_sinusoid
from .dit_checkpoint import diffusers_name, dit_from_checkpoint, load_dit_checkpoint
from .rope import apply_rope, rope_axis_pairs, rope_tables
from .text_encoder import Wan21TextEncoder
from .tokenize import tokenize
from .vae import VaeCache, Wan21VaeDecoder
from .vae_checkpoint import bind_vae_checkpoint, load_vae_decoder, random_vae_weights, write_vae_checkpoint
from .vae_config import WAN21_VAE, WAN21_VAE_MINI, VaeParameter, WanVaeConfig, decoder_parameters
from .velocity import (
    DitBatch,
    cfg_combine,
    dit_batch,
    dit_batch_from_embeds,
    pad_prompt_embeds,
    uses_cfg,
    velocity,
    velocity_from_embeds,
)
from .weights import load_fleet_weights

__all__ = [
    "PAD_TOKEN",
    "WAN21_1_3B",
    "WAN21_MINI",
    "WAN21_VAE",
    "WAN21_VAE_MINI",
    "DitBatch",
    "VaeCache",
    "VaeParameter",
    "Wan21Config",
    "Wan21DiT",
    "Wan21TextEncoder",
    "Wan21VaeDecoder",
    "WanVaeConfig",
    "apply_rope",
    "bind_vae_checkpoint",
    "cfg_combine",
    "decoder_parameters",
    "diffusers_name",
    "dit_batch",
    "dit_batch_from_embeds",
    "dit_from_checkpoint",
    "load_dit_checkpoint",
    "load_fleet_weights",
    "load_vae_decoder",
    "pad_prompt_embeds",
    "random_vae_weights",
    "rope_axis_pairs",
    "rope_tables",
    "timestep_sinusoid",
    "tokenize",
    "uses_cfg",
    "velocity",
    "velocity_from_embeds",
    "write_vae_checkpoint",
]
