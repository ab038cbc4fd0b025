"""The wan21 card's toy text encoder as a torch ``nn.Module`` (its ``text_encoder`` component).

h = token_embedding[tokens] + pos_embedding; context = h + mlp.2(GELU(mlp.0(LN(h)))), the maths of
``packages/models/src/wan21/onnx/text-encoder-graph.ts``. The fleet names this component's weights
``text_encoder.*``, so the layers live in a child module called ``text_encoder`` and
``state_dict()`` carries exactly ``textEncoderParameterShapes(config)``.
"""

from __future__ import annotations

import torch
from torch import nn

from ..errors import FlowfleetError
from .config import WAN21_MINI, Wan21Config
from .layers import gelu_mlp, layer_norm


class TextEncoderLayers(nn.Module):
    """The parameters under ``text_encoder.``: token and position embeddings and the MLP."""

    def __init__(self, config: Wan21Config) -> None:
        super().__init__()
        self.token_embedding = nn.Embedding(config.text_vocab, config.text_dim)
        self.pos_embedding = nn.Parameter(0.1 * torch.randn(config.text_len, config.text_dim))
        self.mlp = gelu_mlp(config.text_dim, config.text_hidden, config.text_dim)


class Wan21TextEncoder(nn.Module):
    """Byte ids [B, text_len] → context [B, text_len, text_dim] in the module's dtype."""

    def __init__(self, config: Wan21Config = WAN21_MINI) -> None:
        super().__init__()
        self.config = config
        self.text_encoder = TextEncoderLayers(config)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Raises :class:`FlowfleetError` ``MODEL_INPUT_INVALID`` for a wrong token count or an id
        outside the vocabulary (as the TS reference does)."""
        cfg = self.config
        if tokens.dim() != 2 or tokens.shape[1] != cfg.text_len or tokens.shape[0] == 0:
            raise FlowfleetError(
                "MODEL_INPUT_INVALID",
                f"tokens must be [B, {cfg.text_len}]",
                {"input": "tokens", "dims": list(tokens.shape), "textLen": cfg.text_len},
            )
        if tokens.is_floating_point() or tokens.min() < 0 or tokens.max() >= cfg.text_vocab:
            raise FlowfleetError(
                "MODEL_INPUT_INVALID",
                "token ids must be integers in the vocabulary",
                {"input": "tokens", "textVocab": cfg.text_vocab},
            )
        layers = self.text_encoder
        h = layers.token_embedding(tokens.long()) + layers.pos_embedding
        return h + layers.mlp(layer_norm(h, cfg.eps))
