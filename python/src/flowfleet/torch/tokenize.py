"""The toy text encoder's byte tokenizer (a port of ``packages/models/src/wan21/tokenize.ts``)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .config import PAD_TOKEN, Wan21Config


def tokenize(prompts: Sequence[str], config: Wan21Config) -> torch.Tensor:
    """The UTF-8 bytes of each prompt, truncated to ``config.text_len`` and padded with 256.

    Returns int64 ids ``[len(prompts), text_len]`` (the dtype the ONNX text encoder takes). As in
    the TS tokenizer, truncation may cut a multi-byte character: ids are bytes, not characters.
    """
    length = config.text_len
    ids = torch.full((len(prompts), length), PAD_TOKEN, dtype=torch.int64)
    for row, prompt in enumerate(prompts):
        data = prompt.encode("utf-8")[:length]
        if data:
            ids[row, : len(data)] = torch.tensor(list(data), dtype=torch.int64)
    return ids
