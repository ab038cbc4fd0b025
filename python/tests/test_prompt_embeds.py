"""encode_prompts reproduces Wan's rule on transformers' UMT5EncoderModel (a small random-init
config: real weights cannot be fetched here), and upload_prompt_embeds gives the references a
rollout request takes — which the coordinator checks before it answers."""

from __future__ import annotations

import numpy as np
import pytest
import tokenizers
import torch
import transformers

from fleet_support import Fleet
from flowfleet import Client, FlowfleetError, encode_prompts, upload_prompt_embeds

WORDS = ["a", "red", "fox", "jumps", "over", "the", "lazy", "dog", "in", "snow"]
PROMPTS = ["a red fox", "the lazy dog jumps over   the snow", ""]


def small_umt5() -> tuple[object, object]:
    """A 2-layer umT5 encoder (random init, seed 0) and a word-level tokenizer that appends EOS."""
    torch.manual_seed(0)
    config = transformers.UMT5Config(
        vocab_size=32, d_model=16, d_kv=4, d_ff=32, num_layers=2, num_heads=4,
        relative_attention_num_buckets=8, relative_attention_max_distance=16,
        pad_token_id=0, eos_token_id=1, decoder_start_token_id=0,
    )  # fmt: skip
    model = transformers.UMT5EncoderModel(config).eval()
    vocab = {"<pad>": 0, "</s>": 1, "<unk>": 2, **{w: i + 3 for i, w in enumerate(WORDS)}}
    core = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    core.post_processor = tokenizers.processors.TemplateProcessing(
        single="$A </s>", special_tokens=[("</s>", 1)]
    )
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    return model, tokenizer


def test_encode_prompts_cuts_each_prompt_to_its_true_length_as_wan_does() -> None:
    model, tokenizer = small_umt5()
    embeds = encode_prompts(PROMPTS, model, tokenizer, max_length=12)
    # True lengths: the words plus EOS (whitespace collapsed); the empty prompt is EOS alone.
    assert [tuple(e.shape) for e in embeds] == [(4, 16), (8, 16), (1, 16)]
    for prompt, embed in zip(PROMPTS, embeds, strict=True):
        # The same prompt encoded alone, no padding at all: the mask kept the padding out.
        ids = tokenizer([" ".join(prompt.split())], return_tensors="pt")["input_ids"]
        with torch.no_grad():
            alone = model(input_ids=ids).last_hidden_state[0]
        np.testing.assert_allclose(embed.numpy(), alone.numpy(), rtol=0, atol=1e-5)


def test_the_attention_mask_matters_so_the_test_above_can_fail() -> None:
    model, tokenizer = small_umt5()
    tokens = tokenizer(["a red fox"], padding="max_length", max_length=12, return_tensors="pt")
    with torch.no_grad():
        unmasked = model(input_ids=tokens["input_ids"]).last_hidden_state[0, :4]
    [masked] = encode_prompts(["a red fox"], model, tokenizer, max_length=12)
    assert float((unmasked - masked).abs().max()) > 1e-3


def test_encode_prompts_refuses_a_bare_string() -> None:
    model, tokenizer = small_umt5()
    with pytest.raises(FlowfleetError) as error:
        encode_prompts("a red fox", model, tokenizer)  # type: ignore[arg-type]
    assert error.value.code == "CLIENT_INVALID_OPTIONS"


def test_uploaded_embeddings_are_references_the_edge_checks(trainer: Client, fleet: Fleet) -> None:
    rng = np.random.default_rng(0)
    good, wide = rng.standard_normal((7, 4096), dtype=np.float32), np.zeros((3, 16), np.float32)
    refs = upload_prompt_embeds(trainer, [good, good, wide])
    assert refs[0] == refs[1] and len(refs[0]["sha256"]) == 64
    request = {"model": "wan2.1-t2v-1.3b", "prompt": "a red fox", "seeds": [1, 2, 3, 4]}
    with pytest.raises(FlowfleetError) as refused:
        trainer.enqueue_rollouts({**request, "promptEmbeds": refs[2], "negativePromptEmbeds": refs[0]})
    assert refused.value.code == "API_EMBEDS_INVALID"
    assert refused.value.details["field"] == "promptEmbeds"
    # Good references pass the embedding check; this fleet's workers do not load the 1.3B card.
    with pytest.raises(FlowfleetError) as no_worker:
        trainer.enqueue_rollouts({**request, "promptEmbeds": refs[0], "negativePromptEmbeds": refs[1]})
    assert no_worker.value.code == "API_NO_CAPACITY"
    with pytest.raises(FlowfleetError) as bad_shape:
        upload_prompt_embeds(trainer, [np.zeros((0, 8), np.float32)])
    assert bad_shape.value.code == "CLIENT_INVALID_OPTIONS"
