"""flowfleet's PyTorch side (``pip install "flowfleet[torch]"``): the wan21 card's DiT and text
encoder as ``nn.Module``s whose ``state_dict()`` is the fleet's weight set, the byte tokenizer,
the RoPE tables, and the per-step velocity with the card's batching and CFG conventions.
"""

from .config import PAD_TOKEN, WAN21_1_3B, WAN21_MINI, Wan21Config
from .dit import Wan21DiT, timestep_sinusoid
from .rope import apply_rope, rope_axis_pairs, rope_tables
from .text_encoder import Wan21TextEncoder
from .tokenize import tokenize
from .velocity import DitBatch, cfg_combine, dit_batch, uses_cfg, velocity
from .weights import load_fleet_weights

__all__ = [
    "PAD_TOKEN",
    "WAN21_1_3B",
    "WAN21_MINI",
    "DitBatch",
    "Wan21Config",
    "Wan21DiT",
    "Wan21TextEncoder",
    "apply_rope",
    "cfg_combine",
    "dit_batch",
    "load_fleet_weights",
    "rope_axis_pairs",
    "rope_tables",
    "timestep_sinusoid",
    "tokenize",
    "uses_cfg",
    "velocity",
]
