#!/usr/bin/env python3
"""FlowGRPO on a flowfleet fleet, in PyTorch: the shape of flow_grpo's Wan2.1 trainer.

Each iteration enqueues a batch of prompts × a group of G seeds (SDE, CFG) that requires the
trainer's current DiT version (``{exact: v}``; ``--max-staleness K``: ``{maxStaleness: K}``, and
the next batch is enqueued before training so rollouts overlap the update), scores the final
latents with a pluggable reward (``rewards.py``), normalises advantages per prompt group,
recomputes every trained step's log-prob under the current policy with gradients from the result
files (latents, sigmas, noise level, CFG scale, ``cfgRule``, negative prompt), takes flow_grpo's
clipped-ratio step with AdamW, pushes the new weights (upload, sync v + 1, every live worker's
ack; under LoRA the adapter, merged by the fleet into the base version) and appends one JSON
line to ``--log`` (default ``examples/flowgrpo/runs/flowgrpo-<UTC
time>.jsonl``, gitignored). At the end it plots reward over iterations (beside the log).

    .venv/bin/python examples/flowgrpo/train.py --url URL --token TOKEN --iterations 30 --log out.jsonl

A card whose text input is embeddings (``wan2.1-t2v-1.3b``, ``wan21-mini-embeds``) has no text
encoder on the fleet: ``--text-encoder DIR`` (a diffusers-style root with ``tokenizer/`` and
``text_encoder/``, umT5) encodes each prompt and the negative prompt once, the trainer uploads
them and names them in every request, and its recompute pads them as the worker does.
``--checkpoint DIR`` starts from published DiT weights (pushed as the base version);
``--lora-rank R`` trains a LoRA adapter (the 1.3B card's default: r 32, α 64, flow_grpo's recipe)
and each iteration syncs the adapter as a LoRA on the base version:

    train.py --model wan2.1-t2v-1.3b --checkpoint Wan2.1-T2V-1.3B-Diffusers/transformer \
        --text-encoder Wan2.1-T2V-1.3B-Diffusers --reward jpeg-compressibility

URL and token also come from FLOWFLEET_URL and FLOWFLEET_TOKEN. Exit codes: 0 ok, 1 a failure
(``train.py: CODE: message``), 2 usage.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import torch
from flowfleet import Client, FlowfleetError, RolloutFile, encode_prompts, upload_prompt_embeds
from flowfleet.torch import WAN21_1_3B, WAN21_MINI, Wan21Config

from fleet_io import Batch, collect, enqueue_batch, push
from frame_subset import FrameSubset
from grpo import Objective, group_advantages, train_iteration
from plot import plot_rewards
from policy import TRAINABLE, Policy
from rewards import REWARDS, Reward, load_reward_module
from scoring import score_groups
from summary import summarize, write_summary
from transitions import build_transitions, trained_steps


@dataclass(frozen=True)
class Model:
    """A card this trainer can train: its DiT as flowfleet.torch builds it, its text input, and
    how it trains by default (a LoRA (rank, alpha), else the whole DiT; the learning rate)."""

    config: Wan21Config
    text_input: str = "tokens"
    lora: tuple[int, float] | None = None
    lr: float = 3e-3


#: The cards this trainer can train (``--model``). ``wan21-mini-vae`` is wan21-mini plus a small
#: Wan2.1 VAE decoder, so its rollouts can return decoded frames (a frames reward's default);
#: ``wan21-mini-embeds`` is wan21-mini taking umT5 embeddings by reference, the reduced config of
#: ``wan2.1-t2v-1.3b`` (flow_grpo's Wan2.1 recipe: LoRA r 32, α 64, learning rate 1e-4).
MODELS: dict[str, Model] = {
    "wan21-mini": Model(WAN21_MINI),
    "wan21-mini-vae": Model(WAN21_MINI),
    "wan21-mini-embeds": Model(WAN21_MINI, "embeddings"),
    "wan2.1-t2v-1.3b": Model(WAN21_1_3B, "embeddings", lora=(32, 64.0), lr=1e-4),
}
PIXEL_MODEL = "wan21-mini-vae"

#: Where a run's log and plot go unless ``--log`` says otherwise: beside this script, whatever
#: the working directory (``npm run train`` runs from the repository root), and gitignored.
RUNS_DIR = Path(__file__).resolve().parent / "runs"


def default_log_path(now: datetime | None = None) -> Path:
    """``runs/flowgrpo-<UTC time>.jsonl`` beside this script: one file per run, none overwritten."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    return RUNS_DIR / f"flowgrpo-{stamp}.jsonl"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="FlowGRPO training of wan21-mini against a flowfleet fleet.")
    env = os.environ
    p.add_argument("--url", default=env.get("FLOWFLEET_URL", "http://127.0.0.1:8080"))
    p.add_argument("--token", default=env.get("FLOWFLEET_TOKEN"), help="trainer token")
    p.add_argument("--iterations", type=int, default=30)
    p.add_argument(
        "--log",
        type=Path,
        help="JSON lines, one per iteration (default: examples/flowgrpo/runs/flowgrpo-<UTC time>.jsonl)",
    )
    p.add_argument("--plot", type=Path, help="reward plot (PNG; default: the log's name with .png)")
    p.add_argument("--summary", type=Path, help="write the run's figures (JSON) here at the end")
    default_model = f"default: wan21-mini; {PIXEL_MODEL} for a frames reward"
    p.add_argument("--model", choices=sorted(MODELS), help=f"the card to train ({default_model})")
    p.add_argument("--reward", choices=sorted(REWARDS), help="a built-in reward (default: color)")
    p.add_argument("--reward-module", type=Path, help="a Python file defining score(frames, prompts)")
    p.add_argument(
        "--reward-frames", help="frames a frames reward scores: first, all, every-K (default: the reward's)"
    )
    p.add_argument("--prompt", action="append", help="a training prompt (repeat; default: the reward's)")
    p.add_argument("--group", type=int, default=8, help="seeds per prompt (G)")
    p.add_argument("--steps", type=int, default=6, help="denoise steps per rollout")
    p.add_argument("--frames", type=int, default=1)
    p.add_argument("--size", type=int, default=8, help="latent height and width")
    p.add_argument("--guidance", type=float, default=4.5, help="CFG scale")
    p.add_argument("--cfg-rule", choices=["above-one", "unless-one"], default="above-one")
    p.add_argument("--negative-prompt", default="")
    p.add_argument("--noise-level", type=float, default=0.7)
    p.add_argument("--shift", type=float, default=3.0)
    p.add_argument("--max-staleness", type=int, help="accept rollouts on weights up to K versions old")
    p.add_argument(
        "--train", choices=sorted(TRAINABLE), help="which DiT parameters, without LoRA (default: all)"
    )
    p.add_argument(
        "--checkpoint",
        type=Path,
        help="the DiT's base weights (a diffusers or Wan checkpoint; default: seeded)",
    )
    p.add_argument(
        "--text-encoder",
        type=Path,
        help="an embeddings card's umT5: a root with tokenizer/ and text_encoder/ (diffusers layout)",
    )
    p.add_argument(
        "--lora-rank", type=int, help="train a LoRA adapter of this rank (0: the whole DiT; 1.3B default 32)"
    )
    p.add_argument(
        "--lora-alpha", type=float, help="LoRA alpha (default: 2 × rank, as flow_grpo's 64 for 32)"
    )
    p.add_argument("--lr", type=float, help="learning rate (default: 3e-3; 1e-4 for wan2.1-t2v-1.3b)")
    p.add_argument("--weight-decay", type=float, default=1e-4)
    p.add_argument("--clip-range", type=float, default=Objective.clip_range)
    p.add_argument("--adv-clip-max", type=float, default=Objective.adv_clip_max)
    p.add_argument("--beta", type=float, default=Objective.beta, help="KL weight (0: off)")
    p.add_argument("--max-grad-norm", type=float, default=Objective.max_grad_norm)
    p.add_argument("--inner-epochs", type=int, default=Objective.inner_epochs)
    p.add_argument("--timestep-fraction", type=float, default=1.0)
    p.add_argument("--micro-batch", type=int, default=Objective.micro_batch)
    p.add_argument("--seed", type=int, default=0, help="torch init, and the rollouts' seeds")
    p.add_argument("--save-rollouts", type=Path, help="keep every result file in this directory")
    p.add_argument(
        "--torch-threads", type=int, help="torch's intra-op threads (default: torch's; 1 beside busy workers)"
    )
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per rollout or sync")
    args = p.parse_args(argv)
    if args.iterations < 1 or args.group < 2 or args.inner_epochs < 1:
        p.error("--iterations ≥ 1, --group ≥ 2 and --inner-epochs ≥ 1")
    if args.max_staleness is not None and args.max_staleness < 0:
        p.error("--max-staleness must be ≥ 0")
    if args.torch_threads is not None and args.torch_threads < 1:
        p.error("--torch-threads must be ≥ 1")
    if not 0 < args.timestep_fraction <= 1:
        p.error("--timestep-fraction must be in (0, 1]")
    if args.reward is not None and args.reward_module is not None:
        p.error("--reward and --reward-module exclude each other")
    try:
        args.reward_fn = (
            load_reward_module(args.reward_module) if args.reward_module else REWARDS[args.reward or "color"]
        )
    except ValueError as error:
        p.error(str(error))
    args.reward = args.reward_fn.name
    try:
        subset = args.reward_frames
        args.reward_frames = FrameSubset.parse(subset) if subset else args.reward_fn.frames
    except ValueError as error:
        p.error(f"--reward-frames: {error}")
    args.model = args.model or (PIXEL_MODEL if args.reward_fn.input == "frames" else "wan21-mini")
    model = MODELS[args.model]
    if model.text_input == "embeddings" and args.text_encoder is None:
        p.error(f"--model {args.model} takes text embeddings: give --text-encoder DIR (umT5)")
    if model.text_input == "tokens" and args.text_encoder is not None:
        p.error(f"--model {args.model} encodes its own tokens; --text-encoder is for an embeddings card")
    if args.lora_rank is None:
        args.lora = (
            model.lora if args.lora_alpha is None or model.lora is None else (model.lora[0], args.lora_alpha)
        )
    elif args.lora_rank < 0:
        p.error("--lora-rank must be ≥ 0")
    else:
        alpha = 2.0 * args.lora_rank if args.lora_alpha is None else args.lora_alpha
        args.lora = (args.lora_rank, alpha) if args.lora_rank > 0 else None
    if args.lora is not None and args.lora[1] <= 0:
        p.error("--lora-alpha must be > 0")
    if args.lora is not None and args.train is not None:
        p.error("--train picks DiT parameters; with LoRA the adapter trains (--lora-rank 0: no LoRA)")
    args.train = args.train or "all"
    args.lr = model.lr if args.lr is None else args.lr
    args.prompts = args.prompt or list(args.reward_fn.prompts)
    if not args.prompts:
        p.error(f"reward {args.reward!r} names no prompts: give --prompt")
    if args.log is None:
        args.log = default_log_path()
    return args


def rollout_request(
    args: argparse.Namespace, version: int, te_version: int | None, negative_embeds: dict[str, str] | None
) -> dict[str, Any]:
    """The rollout fields every group of an iteration shares (all but prompt, seeds and an
    embeddings card's ``promptEmbeds``): the DiT's version fence, and the text encoder's — or,
    for an embeddings card, the negative prompt's uploaded embedding."""
    dit = {"exact": version} if args.max_staleness is None else {"maxStaleness": args.max_staleness}
    weights: dict[str, Any] = {"dit": dit}
    text: dict[str, Any] = {}
    if te_version is not None:
        weights["text_encoder"] = {"exact": te_version}
    if negative_embeds is not None:
        text["negativePromptEmbeds"] = negative_embeds
    return {
        "model": args.model,
        "sampler": "sde",
        "steps": args.steps,
        "shape": {"frames": args.frames, "height": args.size, "width": args.size},
        "guidanceScale": args.guidance,
        "cfgRule": args.cfg_rule,
        "negativePrompt": args.negative_prompt,
        "noiseLevel": args.noise_level,
        "shift": args.shift,
        "weights": weights,
        **text,
        **outputs_request(args),
    }


def outputs_request(args: argparse.Namespace) -> dict[str, Any]:
    """What the rollouts return besides the log-probs: the frame subset a frames reward scores
    (decoded on the worker), and — when only some steps are trained — just those steps' latents
    (the file always keeps x_T). Latents-only, every-step runs ask for neither (RolloutFile v1)."""
    out: dict[str, Any] = {}
    reward: Reward = args.reward_fn
    if reward.input == "frames":
        out["decodeFrames"] = args.reward_frames.request_value()
    trained = trained_steps(args.steps, args.timestep_fraction)
    if len(trained) < args.steps:
        out["keepLatents"] = {"fromStep": trained[0], "steps": len(trained)}
    return out


def check_versions(
    rollouts: list[RolloutFile], batch: Batch, args: argparse.Namespace, te: int | None
) -> int:
    """The DiT version the batch ran on (the oldest), after checking the fence held: ``exact``
    the version it was enqueued at; ``maxStaleness`` K at most K older than that (or newer)."""
    ran = [int(r.metadata["weightsVersions"]["dit"]) for r in rollouts]
    low = batch.version - (args.max_staleness or 0)
    high = batch.version + (0 if args.max_staleness is None else 1)
    bad = [v for v in ran if not low <= v <= high]
    if te is not None:
        bad += [v for v in (int(r.metadata["weightsVersions"]["text_encoder"]) for r in rollouts) if v != te]
    if bad:
        raise RuntimeError(f"rollouts ran on weights outside the fence (dit {ran}, want {low}..{high})")
    return min(ran)


def peak_rss_mb() -> float:
    """The trainer's peak resident set so far (``getrusage``; Linux reports KiB), in MiB."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def encode_text(args: argparse.Namespace, config: Wan21Config) -> tuple[dict[str, Any], Any]:
    """Each distinct prompt's umT5 embedding and the negative prompt's, encoded once with the
    encoder and tokenizer under ``--text-encoder`` (diffusers layout: ``text_encoder/``,
    ``tokenizer/``); the encoder is dropped afterwards."""
    transformers: Any = importlib.import_module("transformers")
    root: Path = args.text_encoder
    for sub in ("tokenizer", "text_encoder"):
        if not (root / sub).is_dir():
            raise ValueError(f"--text-encoder {root}: no {sub}/ folder (the diffusers layout)")
    transformers.utils.logging.disable_progress_bar()
    tokenizer = transformers.AutoTokenizer.from_pretrained(root / "tokenizer")
    # The checkpoint's own dtype (umT5-XXL as published: bf16), not a float32 copy of it.
    dtype_arg = "dtype" if int(transformers.__version__.split(".")[0]) >= 5 else "torch_dtype"
    encoder = transformers.UMT5EncoderModel.from_pretrained(root / "text_encoder", **{dtype_arg: "auto"})
    prompts = list(dict.fromkeys(args.prompts))
    embeds = encode_prompts(
        [*prompts, args.negative_prompt], encoder.eval(), tokenizer, max_length=config.text_len
    )
    del encoder
    return dict(zip(prompts, embeds[:-1], strict=True)), embeds[-1]


def run(args: argparse.Namespace) -> tuple[list[dict[str, Any]], dict[str, list[float]]]:
    """The training loop; answers the log records and the last iteration's per-prompt group mean
    of the reward's probe (e.g. the channel means of the final latents)."""
    reward_fn: Reward = args.reward_fn
    if args.torch_threads is not None:
        torch.set_num_threads(args.torch_threads)
    objective = Objective(
        args.clip_range, args.adv_clip_max, args.beta, args.max_grad_norm, args.inner_epochs, args.micro_batch
    )
    model = MODELS[args.model]
    config = model.config
    embeds = encode_text(args, config) if model.text_input == "embeddings" else None
    policy = Policy(
        config,
        args.seed,
        text_input=model.text_input,
        checkpoint=args.checkpoint,
        lora=args.lora,
        train=args.train,
    )
    optimizer = torch.optim.AdamW(
        policy.params, lr=args.lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=args.weight_decay
    )
    if args.save_rollouts is not None:
        args.save_rollouts.mkdir(parents=True, exist_ok=True)
    args.log.parent.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []
    final_probe: dict[str, list[float]] = {}
    with (
        Client(args.url, args.token) as fleet,
        args.log.open("w") as log,
        tempfile.TemporaryDirectory(prefix="flowgrpo-lora-") as scratch,
    ):
        te_version = None
        prompt_refs: dict[str, dict[str, str]] | None = None
        negative_ref: dict[str, str] | None = None
        if embeds is not None:
            prompts, negative = embeds
            policy.set_embeddings(prompts, negative)
            refs = upload_prompt_embeds(fleet, [*prompts.values(), negative])
            prompt_refs, negative_ref = dict(zip(prompts, refs[:-1], strict=True)), refs[-1]
            text = f"uploaded {len(refs)} prompt embeddings (each once)"
        else:
            assert policy.text_encoder is not None
            te_version = push(fleet, policy.text_encoder.state_dict(), "text_encoder", args.timeout)
            text = f"pushed text_encoder v{te_version}"
        base = args.checkpoint if args.checkpoint is not None else policy.dit.state_dict()
        base_version = version = push(fleet, base, "dit", args.timeout)
        states = {version: policy.state()}
        lora_dir = Path(scratch)
        training = "the whole DiT" if args.lora is None else f"LoRA r{args.lora[0]} α{args.lora[1]:g}"
        print(
            f"train.py: {text}, dit v{version}; training {training}; {args.iterations} iterations "
            f"of {len(args.prompts)} prompts × {args.group} seeds, reward {args.reward}; log {args.log}",
            flush=True,
        )
        pending: Batch | None = None
        for n in range(args.iterations):
            started = time.perf_counter()
            request = rollout_request(args, version, te_version, negative_ref)
            enqueue = (fleet, n, version, args.prompts, args.group, args.seed, request, prompt_refs)
            batch = pending or enqueue_batch(*enqueue)
            rollouts = collect(fleet, batch, args.timeout, args.save_rollouts)
            ran_on = check_versions(rollouts, batch, args, te_version)
            pending = None
            if args.max_staleness and n + 1 < args.iterations:
                # The next batch samples while this one trains (it may run one version behind).
                pending = enqueue_batch(fleet, n + 1, *enqueue[2:])
            rollout_s = time.perf_counter() - started

            started = time.perf_counter()
            scores = score_groups(reward_fn, rollouts, batch.prompts, args.reward_frames)
            reward_s = time.perf_counter() - started

            started = time.perf_counter()
            prompt_index = policy.prompt_index(batch.prompts) if embeds is not None else None
            advantages = [group_advantages(r) for r in scores.rewards]
            rows = build_transitions(rollouts, advantages, config, args.timestep_fraction, prompt_index)
            if embeds is not None and rows.guidance.negative_prompt != args.negative_prompt:
                raise RuntimeError("the rollouts ran with another negative prompt than the one encoded")
            stats = train_iteration(policy, optimizer, policy.params, rows, objective, version, states)
            train_s = time.perf_counter() - started

            started = time.perf_counter()
            state = policy.state()
            adapter_bytes = None
            if args.lora is None:
                new_version = push(fleet, state, "dit", args.timeout)
            else:
                # The adapter since the base, merged by every worker into the base version.
                assert policy.lora is not None
                adapter_bytes = policy.lora.save(lora_dir).stat().st_size
                new_version = push(fleet, lora_dir, "dit", args.timeout, lora_base=base_version)
            states[new_version] = state
            keep = 1 + (args.max_staleness or 0)
            states = {v: s for v, s in states.items() if v > new_version - keep - 1}
            sync_s = time.perf_counter() - started

            every = np.concatenate(scores.rewards)
            final_probe = scores.probe
            record = {
                "iteration": n,
                "weights_version": ran_on,
                "reward": args.reward,
                "prompts": batch.prompts,
                "group_size": args.group,
                "request": batch.request,
                "prompt_embeds": prompt_refs,
                "reward_mean": float(every.mean()),
                "reward_std": float(every.std()),
                "ratio_err_max": stats.ratio_err_max,
                "kl": stats.kl,
                "clip_frac": stats.clip_frac,
                "rollout_s": round(rollout_s, 4),
                "reward_s": round(reward_s, 4),
                "train_s": round(train_s, 4),
                "sync_s": round(sync_s, 4),
                "adapter_bytes": adapter_bytes,
                "peak_rss_mb": peak_rss_mb(),
            }
            log.write(json.dumps(record) + "\n")
            log.flush()
            records.append(record)
            lora_note = "" if adapter_bytes is None else f" (adapter {adapter_bytes / 1e6:.2f} MB)"
            print(
                f"iter {n:3d} v{ran_on}: reward {record['reward_mean']:+.4f} ± {record['reward_std']:.4f}  "
                f"ratio_err {stats.ratio_err_max:.1e}  kl {stats.kl:.2e}  clip {stats.clip_frac:.2f}  "
                f"rollout {rollout_s:.2f}s reward {reward_s:.2f}s train {train_s:.2f}s "
                f"sync {sync_s:.2f}s{lora_note} → v{new_version}  peak RSS {record['peak_rss_mb']:.0f} MiB",
                flush=True,
            )
            version = new_version
    return records, final_probe


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        records, final_probe = run(args)
    except FlowfleetError as error:
        print(f"train.py: {error.code}: {error.message}", file=sys.stderr)
        return 1
    except (RuntimeError, ValueError) as error:
        print(f"train.py: {error}", file=sys.stderr)
        return 1
    plot = args.plot or args.log.with_suffix(".png")
    title = f"FlowGRPO on flowfleet: reward '{args.reward}', {len(args.prompts)} prompts × {args.group} seeds"
    reward: Reward = args.reward_fn
    print(plot_rewards(records, plot, title, reward.baseline))
    if args.summary is not None:
        settings = {
            k: str(v) if isinstance(v, (Path, FrameSubset)) else v
            for k, v in vars(args).items()
            if k not in ("token", "reward_fn")
        }
        probe = None if reward.probe is None else (reward.probe[0], final_probe)
        figures = summarize(records, settings, reward.baseline, probe)
        write_summary(args.summary, figures)
        f = figures["figures"]
        print(
            f"summary: {args.summary} — reward {f['first3']['meanOfMeans']:+.4f} (first 3) → "
            f"{f['last3']['meanOfMeans']:+.4f} (last 3) over {len(records)} iterations; "
            f"ratio_err_max {f['ratioErrMax']:.1e}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
