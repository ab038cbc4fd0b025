"""The embeddings-input path of flowfleet.torch (the context is an uploaded embedding zero-padded
to text_len, batched [uncond ×G, cond ×G] as the worker batches it) and loading published DiT
checkpoints (Wan's names, diffusers' names and shards, prefixes). The parity with the fleet is
test_flowgrpo_embeds (the trainer's recompute against the worker's log-probs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from flowfleet import FlowfleetError
from flowfleet.torch import (
    WAN21_MINI,
    Wan21DiT,
    cfg_combine,
    diffusers_name,
    dit_batch_from_embeds,
    dit_from_checkpoint,
    pad_prompt_embeds,
    velocity_from_embeds,
)

L, D = WAN21_MINI.text_len, WAN21_MINI.text_dim


def test_pad_prompt_embeds_appends_zero_rows_to_the_text_length() -> None:
    embedding = torch.randn(5, D).to(torch.bfloat16)
    padded = pad_prompt_embeds(embedding, WAN21_MINI)
    assert padded.dtype == torch.float32 and padded.shape == (L, D)
    assert torch.equal(padded[:5], embedding.float())  # bf16 widens exactly
    assert not padded[5:].any()
    for bad in (torch.zeros(0, D), torch.zeros(L + 1, D), torch.zeros(3, D + 1), torch.zeros(D)):
        with pytest.raises(FlowfleetError) as refused:
            pad_prompt_embeds(bad, WAN21_MINI)
        assert refused.value.code == "MODEL_INPUT_INVALID"


def test_the_embeddings_batch_is_uncond_then_cond_and_the_velocity_combines_it() -> None:
    torch.manual_seed(0)
    dit = Wan21DiT(WAN21_MINI)
    x = torch.randn(3, 4, 1, 4, 4)
    prompt, negative = torch.randn(4, D), torch.randn(1, D)
    batch = dit_batch_from_embeds(WAN21_MINI, x, 700.0, prompt, guidance_scale=4.5, negative_embeds=negative)
    assert batch.cfg and batch.context.shape == (6, L, D) and batch.latent.shape == (6, 4, 1, 4, 4)
    for row in range(3):
        assert torch.equal(batch.context[row], pad_prompt_embeds(negative, WAN21_MINI))
        assert torch.equal(batch.context[3 + row], pad_prompt_embeds(prompt, WAN21_MINI))
    with torch.no_grad():
        v = velocity_from_embeds(dit, x, 700.0, prompt, guidance_scale=4.5, negative_embeds=negative)
        out = dit(batch.latent, batch.timestep, batch.context)
        assert torch.equal(v, cfg_combine(out[:3], out[3:], 4.5))
        # Per-sample padded contexts [G, L, D] are the same as one broadcast embedding.
        rows = pad_prompt_embeds(prompt, WAN21_MINI).expand(3, -1, -1)
        again = velocity_from_embeds(dit, x, 700.0, rows, guidance_scale=4.5, negative_embeds=negative)
        assert torch.equal(v, again)
    no_cfg = dit_batch_from_embeds(WAN21_MINI, x, 700.0, prompt, guidance_scale=1.0, cfg_rule="above-one")
    assert not no_cfg.cfg and no_cfg.context.shape == (3, L, D)
    with pytest.raises(FlowfleetError) as refused:
        dit_batch_from_embeds(WAN21_MINI, x, 700.0, prompt, guidance_scale=4.5)
    assert refused.value.code == "MODEL_INPUT_INVALID"
    assert refused.value.details["input"] == "negative_embeds"


def test_diffusers_names_follow_the_conversion_script() -> None:
    assert diffusers_name("blocks.0.self_attn.q.weight") == "blocks.0.attn1.to_q.weight"
    assert diffusers_name("blocks.1.cross_attn.o.bias") == "blocks.1.attn2.to_out.0.bias"
    assert diffusers_name("blocks.0.norm3.weight") == "blocks.0.norm2.weight"
    assert diffusers_name("blocks.0.modulation") == "blocks.0.scale_shift_table"
    assert diffusers_name("head.modulation") == "scale_shift_table"
    assert diffusers_name("head.head.weight") == "proj_out.weight"
    assert diffusers_name("blocks.0.ffn.0.weight") == "blocks.0.ffn.net.0.proj.weight"
    assert diffusers_name("time_projection.1.weight") == "condition_embedder.time_proj.weight"


def _diffusers_shards(state: dict[str, torch.Tensor], root: Path) -> Path:
    """``state`` in diffusers' names, in two shards and their index, as diffusers saves it."""
    names = sorted(state)
    half = len(names) // 2
    weight_map = {}
    root.mkdir()
    for i, part in enumerate((names[:half], names[half:])):
        file = f"diffusion_pytorch_model-0000{i + 1}-of-00002.safetensors"
        save_file({diffusers_name(n): state[n].to(torch.bfloat16) for n in part}, str(root / file))
        weight_map |= {diffusers_name(n): file for n in part}
    index = {"metadata": {}, "weight_map": weight_map}
    (root / "diffusion_pytorch_model.safetensors.index.json").write_text(json.dumps(index))
    return root


def test_a_diffusers_checkpoint_and_a_wan_file_load_into_the_dit(tmp_path: Path) -> None:
    torch.manual_seed(1)
    state = {k: v.clone() for k, v in Wan21DiT(WAN21_MINI).state_dict().items()}
    loaded = dit_from_checkpoint(WAN21_MINI, _diffusers_shards(state, tmp_path / "transformer"))
    for name, value in loaded.state_dict().items():
        assert torch.equal(value, state[name].to(torch.bfloat16).float()), name
    wan = tmp_path / "wan.safetensors"
    save_file({f"model.{k}": v for k, v in state.items()}, str(wan))
    for name, value in dit_from_checkpoint(WAN21_MINI, wan).state_dict().items():
        assert torch.equal(value, state[name]), name

    partial = tmp_path / "partial.safetensors"
    kept = {k: v for k, v in state.items() if k != "head.head.weight"}
    save_file(kept | {"extra": state["head.head.bias"].clone()}, str(partial))
    with pytest.raises(FlowfleetError) as refused:
        dit_from_checkpoint(WAN21_MINI, partial)
    assert refused.value.code == "MODEL_WEIGHTS_MISMATCH"
    assert sorted(refused.value.details["problems"]) == ["extra: unexpected", "head.head.weight: missing"]
