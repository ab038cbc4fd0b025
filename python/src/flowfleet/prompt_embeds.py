"""Text embeddings by reference: encode prompts once in the trainer (umT5, Wan's rule) and upload
them as the safetensors blobs a rollout request names (``promptEmbeds``, ``negativePromptEmbeds``).

A card whose text input is embeddings (``wan2.1-t2v-1.3b``) has no text encoder: the 5.7 B-parameter
umT5-XXL runs here, once per prompt, never on the rollout workers. ``encode_prompts`` needs torch and
transformers (the ``[umt5]`` extra); ``upload_prompt_embeds`` needs only the client.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .errors import invalid_option
from .weights import weights_bytes

if TYPE_CHECKING:
    from .client import Client

#: Wan2.1's text length: embeddings are cut to the true token count and zero-padded to this many
#: rows by the card (so L ≤ 512).
WAN_TEXT_LEN = 512
#: The tensor name the uploaded safetensors holds (any one name is accepted; this is the SDK's).
EMBEDS_TENSOR = "prompt_embeds"


def _whitespace_clean(text: str) -> str:
    # Wan's HuggingfaceTokenizer(clean="whitespace"): runs of whitespace become one space, trimmed.
    return re.sub(r"\s+", " ", text).strip()


def encode_prompts(
    prompts: Sequence[str], text_encoder: Any, tokenizer: Any, *, max_length: int = WAN_TEXT_LEN
) -> list[Any]:
    """Each prompt's umT5 embedding ``[L_i, d_model]``, cut to its true token count L_i — Wan's rule
    (``T5EncoderModel.__call__``: tokenize to ``max_length`` with padding, truncation and the EOS
    token, run the encoder *with* the attention mask, keep the first ``mask.sum()`` rows). The
    padded rows are dropped here; the card pads with zeros to 512, as Wan's DiT does.

    ``text_encoder`` is a transformers ``UMT5EncoderModel`` (or anything called the same way),
    ``tokenizer`` its tokenizer. Runs under ``torch.no_grad()`` on the encoder's device and dtype;
    returns tensors on the CPU in that dtype (bf16 for umT5-XXL as published).

    :raises FlowfleetError: ``CLIENT_INVALID_OPTIONS`` for no prompts or a non-string prompt
    """
    import torch

    if isinstance(prompts, str) or len(prompts) == 0:
        raise invalid_option("prompts is a non-empty list of strings", "prompts")
    if not all(isinstance(p, str) for p in prompts):
        raise invalid_option("every prompt must be a string", "prompts")
    texts = [_whitespace_clean(p) for p in prompts]
    tokens = tokenizer(
        texts,
        padding="max_length",
        max_length=max_length,
        truncation=True,
        add_special_tokens=True,
        return_attention_mask=True,
        return_tensors="pt",
    )
    device = next(text_encoder.parameters()).device
    ids = tokens["input_ids"].to(device)
    mask = tokens["attention_mask"].to(device)
    with torch.no_grad():
        hidden = text_encoder(input_ids=ids, attention_mask=mask).last_hidden_state
    lengths = mask.gt(0).sum(dim=1).tolist()
    return [hidden[i, :length].detach().cpu().contiguous() for i, length in enumerate(lengths)]


def upload_prompt_embeds(
    client: Client, embeddings: Sequence[Any], *, dtype: str | None = None
) -> list[dict[str, str]]:
    """Uploads each embedding ``[L, dim]`` (a torch tensor or numpy array) as a one-tensor
    safetensors blob and returns, in order, the references a request takes:
    ``{"sha256": ...}`` for ``promptEmbeds`` / ``negativePromptEmbeds``. ``dtype`` casts (F32,
    F16 or BF16 — BF16 needs torch tensors; default: keep the tensor's, bf16 from umT5-XXL).
    Uploads are content-addressed: the same embedding uploads to the same reference.

    :raises FlowfleetError: ``CLIENT_INVALID_OPTIONS`` (not 2-D or empty, or a dtype other than
        F32/F16/BF16), the upload's codes (the coordinator checks the card's dims at enqueue)
    """
    refs: list[dict[str, str]] = []
    for i, embedding in enumerate(embeddings):
        shape = tuple(embedding.shape)
        if len(shape) != 2 or shape[0] < 1 or shape[1] < 1:
            # The card's limits (L ≤ its text length, its width) are the coordinator's to check.
            raise invalid_option(f"embedding {i} is {list(shape)}; expected [L, dim], L ≥ 1", "embeddings")
        data = weights_bytes({EMBEDS_TENSOR: embedding}, dtype)
        refs.append({"sha256": client.upload_blob(data)["sha256"]})
    return refs
