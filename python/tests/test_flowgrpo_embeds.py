"""FlowGRPO on an embeddings-input card with LoRA (issue 19: the example trainer runs this way for
the real card), at the reduced config: examples/flowgrpo/train.py, run as a user runs it, against
a real fleet whose worker serves ``wan21-mini-embeds`` (the wan21-mini DiT taking umT5 embeddings
by reference, with the mini VAE decoder, as ``wan2.1-t2v-1.3b`` does) — the shape of the
one-iteration 1.3B benchmark (examples/flowgrpo/README.md): frames decoded on the worker and
scored by ``jpeg-compressibility``, half the steps trained and only their latents kept. The
trainer encodes each prompt and the negative prompt once with a random-init umT5
(``write_random_umt5.py``, d_model = the card's 64), uploads them, names them in every request,
starts from a diffusers-layout checkpoint (``npm run write-wan21-checkpoint``: BF16 shards and
their index) loaded into its torch DiT and pushed as the base version, trains a LoRA r4 adapter
and syncs it every iteration as a LoRA on the base version.

Asserted: the embeddings were uploaded once (one upload line; every iteration names the same
references; the blobs hold the umT5 embeddings of the prompts); every iteration's ratio_err_max ≤
1e-5 — the trainer's base weights, its context (each embedding zero-padded to 16 rows,
``pad_prompt_embeds``) and its LoRA-merged forward are the worker's; every adapter sync was a
LoRA on the base version, acked and bound. ``FLOWGRPO_TEST_ARGS`` appends trainer flags.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
import transformers
from safetensors.torch import load
from write_random_umt5 import write_random_umt5

from fleet_support import REPO, Fleet, running_fleet, tsx_command
from flowfleet import Client, encode_prompts
from flowgrpo_support import LOG_KEYS, read_log, run_trainer

MODEL = "wan21-mini-embeds"
PROMPTS = ["a red fox", "a blue car in the snow"]
ITERATIONS = 3
GROUP = 4
RATIO_ERR_BOUND = 1e-5
#: The mini DiT's attention projections: 2 blocks × (self, cross) × (q, k, v, o).
LORA_LAYERS = 16


@pytest.fixture(scope="module")
def embeds_fleet() -> Iterator[Fleet]:
    """One worker that loads only the wan21-mini-embeds card (FLOWFLEET_MODELS)."""
    with running_fleet(workers=1, env={"FLOWFLEET_MODELS": MODEL}) as started:
        yield started


def test_flowgrpo_on_uploaded_embeddings_with_lora_matches_the_workers_log_probs(
    embeds_fleet: Fleet, tmp_path: Path
) -> None:
    umt5 = write_random_umt5(tmp_path / "umt5", d_model=64, layers=1, d_ff=32)
    # The base: a published-layout checkpoint (diffusers' names, BF16, 3 shards and their index).
    write = tsx_command(
        "scripts/write-wan21-checkpoint.ts", "--layout", "diffusers", "--config", "mini",
        "--out", str(tmp_path / "wan"), "--max-shard-bytes", "600000", "--seed", "7",
    )  # fmt: skip
    written = subprocess.run(write, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert written.returncode == 0, written.stdout + written.stderr
    log = tmp_path / "embeds.jsonl"
    prompts = [arg for p in PROMPTS for arg in ("--prompt", p)]
    extra = shlex.split(os.environ.get("FLOWGRPO_TEST_ARGS", ""))
    done = run_trainer(
        "--url", embeds_fleet.url, "--token", embeds_fleet.tokens["trainer"], "--model", MODEL,
        "--text-encoder", str(umt5), "--checkpoint", str(tmp_path / "wan" / "transformer"), *prompts,
        "--lora-rank", "4", "--iterations", str(ITERATIONS), "--reward", "jpeg-compressibility",
        "--reward-frames", "every-4", "--frames", "2", "--timestep-fraction", "0.5",
        "--group", str(GROUP), "--steps", "4", "--size", "4", "--seed", "0", "--log", str(log),
        "--plot", str(tmp_path / "reward.png"), "--torch-threads", "1", *extra,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    print("\n" + "\n".join(line for line in done.stdout.splitlines() if line.startswith("iter")))
    records = read_log(log)
    assert [r["iteration"] for r in records] == list(range(ITERATIONS))

    # Uploaded once: two prompts and the negative prompt, then named by every request.
    assert done.stdout.count("uploaded 3 prompt embeddings") == 1
    refs = records[0]["prompt_embeds"]
    assert sorted(refs) == sorted(PROMPTS)
    negative = records[0]["request"]["negativePromptEmbeds"]
    shas = {ref["sha256"] for ref in [*refs.values(), negative]}
    assert len(shas) == 3
    for r in records:
        assert set(r) == LOG_KEYS
        assert r["prompt_embeds"] == refs and r["request"]["negativePromptEmbeds"] == negative
        assert set(r["request"]["weights"]) == {"dit"}  # no text encoder on this card
        # The 1.3B benchmark's shape: frames decoded on the worker, only the trained window kept.
        assert r["request"]["decodeFrames"] == {"every": 4}
        assert r["request"]["keepLatents"] == {"fromStep": 0, "steps": 2}
        assert r["adapter_bytes"] > 0 and r["peak_rss_mb"] > 0
        assert min(r["rollout_s"], r["reward_s"], r["train_s"], r["sync_s"]) > 0

    # What the blobs hold: the umT5 embeddings of the prompts, cut to their true lengths.
    tokenizer = transformers.AutoTokenizer.from_pretrained(umt5 / "tokenizer")
    encoder = transformers.UMT5EncoderModel.from_pretrained(umt5 / "text_encoder").eval()
    expected = encode_prompts([*PROMPTS, ""], encoder, tokenizer, max_length=16)
    with Client(embeds_fleet.url, embeds_fleet.tokens["trainer"]) as trainer:
        stored = [
            next(iter(load(trainer.get_blob_bytes(ref["sha256"])).values()))
            for ref in [refs[PROMPTS[0]], refs[PROMPTS[1]], negative]
        ]
        versions = trainer.weights("dit")["versions"]
    for got, want in zip(stored, expected, strict=True):
        assert torch.equal(got, want)

    # The trainer's recompute (padded context, LoRA-merged DiT) against the worker's log-probs.
    errors = [r["ratio_err_max"] for r in records]
    assert max(errors) <= RATIO_ERR_BOUND, errors
    assert min(errors) > 0  # measured, not skipped

    # Each iteration's adapter: a LoRA on the base version, acked and bound on the worker.
    base = records[0]["weights_version"]
    assert versions[str(base)]["kind"] == "full" and versions[str(base)]["shards"] == 3
    for n, r in enumerate(records):
        assert r["weights_version"] == base + n
        pushed = versions[str(base + n + 1)]
        assert pushed["kind"] == "lora" and pushed["base"] == base
        assert set(pushed["acks"].values()) == {"ok"}
        assert list(pushed["boundLayers"].values()) == [LORA_LAYERS]
    assert np.isfinite([r["reward_mean"] for r in records]).all()


#: The lead's benchmark of the real card (one iteration, a pixel reward): its arguments only.
REAL_CARD_ARGS = [
    "--model", "wan2.1-t2v-1.3b", "--checkpoint", "ckpt/transformer", "--text-encoder", "umt5",
    "--reward", "jpeg-compressibility", "--iterations", "1", "--group", "4", "--steps", "4",
    "--size", "8", "--frames", "3", "--timestep-fraction", "0.5",
]  # fmt: skip


def test_the_real_cards_arguments_default_to_flow_grpos_lora_and_ask_for_the_trained_window() -> None:
    import train

    args = train.parse_args(REAL_CARD_ARGS)
    assert train.MODELS[args.model].config.text_dim == 4096
    assert args.lora == (32, 64.0) and args.lr == 1e-4 and args.checkpoint == Path("ckpt/transformer")
    negative = {"sha256": "0" * 64}
    request = train.rollout_request(args, 1, None, negative)
    assert request["model"] == "wan2.1-t2v-1.3b" and request["negativePromptEmbeds"] == negative
    assert request["weights"] == {"dit": {"exact": 1}}
    assert request["shape"] == {"frames": 3, "height": 8, "width": 8}
    assert "decodeFrames" in request  # the pixel reward scores decoded frames
    assert request["keepLatents"] == {"fromStep": 0, "steps": 2}
    assert train.parse_args([*REAL_CARD_ARGS, "--lora-rank", "8"]).lora == (8, 16.0)
    assert train.parse_args([*REAL_CARD_ARGS, "--lora-alpha", "32"]).lora == (32, 32.0)
    assert train.parse_args([*REAL_CARD_ARGS, "--lora-rank", "0"]).lora is None
    assert train.parse_args(["--model", "wan21-mini"]).lora is None


@pytest.mark.parametrize(
    "argv",
    [
        ["--model", "wan2.1-t2v-1.3b"],  # an embeddings card needs its umT5
        ["--model", "wan21-mini", "--text-encoder", "umt5"],  # a tokens card has its own
        [*REAL_CARD_ARGS, "--train", "all"],  # LoRA trains the adapter
        [*REAL_CARD_ARGS, "--lora-rank", "-1"],
    ],
)
def test_conflicting_text_and_lora_flags_are_usage_errors(argv: list[str]) -> None:
    import train

    with pytest.raises(SystemExit) as usage:
        train.parse_args(argv)
    assert usage.value.code == 2


def test_the_lora_layer_is_the_fleets_merge_with_its_gradients_and_off_is_the_base() -> None:
    from lora import Lora, merged_weight
    from policy import Policy

    from flowfleet.torch import WAN21_MINI

    policy = Policy(WAN21_MINI, 0, text_input="embeddings", lora=(4, 8.0))
    lora = policy.lora
    assert lora is not None and policy._reference is None  # no second DiT: the adapter turns off
    assert len(lora.layers) == LORA_LAYERS and policy.params == lora.parameters()
    assert all(not p.requires_grad for p in policy.dit.parameters())
    linear = policy.dit.blocks[0].cross_attn.q
    a, b = lora.layers["blocks.0.cross_attn.q"]
    with torch.no_grad():
        b.normal_()
    x = torch.randn(3, 5, linear.in_features, requires_grad=True)
    y = linear(x)
    w = merged_weight(linear.weight, a, b, 2.0)
    assert torch.equal(y, torch.nn.functional.linear(x, w, linear.bias))
    # The gradients are those of W + s·B·A (the roundings aside).
    (y * y).sum().backward()
    a2, b2, x2 = (t.detach().clone().requires_grad_(True) for t in (a, b, x))
    y2 = torch.nn.functional.linear(x2, linear.weight + 2.0 * (b2 @ a2), linear.bias)
    (y2 * y2).sum().backward()
    for got, want in ((a.grad, a2.grad), (b.grad, b2.grad), (x.grad, x2.grad)):
        assert got is not None and want is not None
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    with torch.no_grad(), lora.disabled():
        assert torch.equal(linear(x), torch.nn.functional.linear(x, linear.weight, linear.bias))
    state = lora.state()
    assert "base_model.model.blocks.0.attn2.to_q.lora_A.weight" in state
    assert state["base_model.model.blocks.0.attn1.to_out.0.lora_B.weight"].shape == (128, 4)
    assert isinstance(lora, Lora) and lora.config()["target_modules"][-1] == "to_v"
