#!/usr/bin/env python3
"""Writes a random-init umT5 encoder and a word-level tokenizer in the diffusers layout that
``train.py --text-encoder DIR`` reads (``DIR/tokenizer/``, ``DIR/text_encoder/``), offline: a
stand-in for Wan2.1's umT5-XXL where its weights cannot be downloaded. Its embeddings mean
nothing; their shape is the real one (``--d-model 4096`` for wan2.1-t2v-1.3b, 64 for the mini
cards), so the fleet, the uploads and the trainer's recompute run as they would.

    .venv/bin/python examples/flowgrpo/write_random_umt5.py /tmp/umt5 --d-model 4096
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any

#: The tokenizer's words (everything else is ``<unk>``): enough for the rewards' prompts.
WORDS = (
    "a an the of in on with and red green blue white black cat dog fox bird car house tree snow "
    "running jumps over lazy photo painting city street river mountain sky sun"
).split()


def write_random_umt5(
    root: Path, *, d_model: int, layers: int = 1, d_ff: int = 64, heads: int = 4, seed: int = 0
) -> Path:
    """A random umT5 (``UMT5EncoderModel``, seed ``seed``) and its tokenizer under ``root``."""
    import torch

    # Untyped libraries, imported here (only this writer and the trainer's encoder need them).
    tokenizers: Any = importlib.import_module("tokenizers")
    transformers: Any = importlib.import_module("transformers")

    if d_model % heads != 0:
        raise ValueError("d_model must be a multiple of heads")
    torch.manual_seed(seed)
    vocab = {"<pad>": 0, "</s>": 1, "<unk>": 2, **{w: i + 3 for i, w in enumerate(WORDS)}}
    config = transformers.UMT5Config(
        vocab_size=len(vocab), d_model=d_model, d_kv=d_model // heads, d_ff=d_ff, num_layers=layers,
        num_heads=heads, relative_attention_num_buckets=8, relative_attention_max_distance=16,
        pad_token_id=0, eos_token_id=1, decoder_start_token_id=0,
    )  # fmt: skip
    transformers.UMT5EncoderModel(config).eval().save_pretrained(root / "text_encoder")
    core = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    core.normalizer = tokenizers.normalizers.Lowercase()
    core.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    core.post_processor = tokenizers.processors.TemplateProcessing(
        single="$A </s>", special_tokens=[("</s>", 1)]
    )
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    tokenizer.save_pretrained(root / "tokenizer")
    return root


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Write a random-init umT5 (diffusers layout) for train.py.")
    p.add_argument("root", type=Path)
    p.add_argument("--d-model", type=int, default=4096, help="the card's text width (4096: Wan2.1)")
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--d-ff", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    root = write_random_umt5(
        args.root, d_model=args.d_model, layers=args.layers, d_ff=args.d_ff, heads=args.heads, seed=args.seed
    )
    print(f"wrote a random umT5 (d_model {args.d_model}, {args.layers} layers) to {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
