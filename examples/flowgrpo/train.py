#!/usr/bin/env python3
"""FlowGRPO on a flowfleet fleet, in PyTorch: the shape of flow_grpo's Wan2.1 trainer.

Each iteration enqueues a batch of prompts × a group of G seeds (SDE, CFG) that requires the
trainer's current DiT version (``{exact: v}``; ``--max-staleness K``: ``{maxStaleness: K}``, and
the next batch is enqueued before training so rollouts overlap the update), scores the final
latents with a pluggable reward (``rewards.py``), normalises advantages per prompt group,
recomputes every trained step's log-prob under the current policy with gradients from the result
files (latents, sigmas, noise level, CFG scale, ``cfgRule``, negative prompt), takes flow_grpo's
clipped-ratio step with AdamW, pushes the new weights (upload, sync v + 1, every live worker's
ack) and appends one JSON line to ``--log`` (default ``examples/flowgrpo/runs/flowgrpo-<UTC
time>.jsonl``, gitignored). At the end it plots reward over iterations (beside the log).

    .venv/bin/python examples/flowgrpo/train.py --url URL --token TOKEN --iterations 30 --log out.jsonl

URL and token also come from FLOWFLEET_URL and FLOWFLEET_TOKEN. Exit codes: 0 ok, 1 a failure
(``train.py: CODE: message``), 2 usage.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import torch
from flowfleet import Client, FlowfleetError, RolloutFile
from flowfleet.torch import WAN21_MINI, Wan21Config

from fleet_io import Batch, collect, enqueue_batch, push
from frame_subset import FrameSubset
from grpo import Objective, group_advantages, train_iteration
from plot import plot_rewards
from policy import TRAINABLE, Policy, select_parameters
from rewards import REWARDS, Reward, load_reward_module
from scoring import score_groups
from summary import summarize, write_summary
from transitions import build_transitions, trained_steps

#: The cards this trainer can train (``--model``): their DiT and text encoder as flowfleet.torch
#: builds them. ``wan21-mini-vae`` is wan21-mini plus a small Wan2.1 VAE decoder, so its rollouts
#: can return decoded frames (a frames reward's default).
MODELS: dict[str, Wan21Config] = {"wan21-mini": WAN21_MINI, "wan21-mini-vae": WAN21_MINI}
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
    p.add_argument("--train", choices=sorted(TRAINABLE), default="all", help="which DiT parameters")
    p.add_argument("--lr", type=float, default=3e-3)
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
    args.prompts = args.prompt or list(args.reward_fn.prompts)
    if not args.prompts:
        p.error(f"reward {args.reward!r} names no prompts: give --prompt")
    if args.log is None:
        args.log = default_log_path()
    return args


def rollout_request(args: argparse.Namespace, version: int, te_version: int) -> dict[str, Any]:
    """The rollout fields every group of an iteration shares (all but prompt and seeds)."""
    dit = {"exact": version} if args.max_staleness is None else {"maxStaleness": args.max_staleness}
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
        "weights": {"dit": dit, "text_encoder": {"exact": te_version}},
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


def check_versions(rollouts: list[RolloutFile], batch: Batch, args: argparse.Namespace, te: int) -> int:
    """The DiT version the batch ran on (the oldest), after checking the fence held: ``exact``
    the version it was enqueued at; ``maxStaleness`` K at most K older than that (or newer)."""
    ran = [int(r.metadata["weightsVersions"]["dit"]) for r in rollouts]
    low = batch.version - (args.max_staleness or 0)
    high = batch.version + (0 if args.max_staleness is None else 1)
    bad = [v for v in ran if not low <= v <= high]
    bad += [v for v in (int(r.metadata["weightsVersions"]["text_encoder"]) for r in rollouts) if v != te]
    if bad:
        raise RuntimeError(f"rollouts ran on weights outside the fence (dit {ran}, want {low}..{high})")
    return min(ran)


def run(args: argparse.Namespace) -> tuple[list[dict[str, Any]], dict[str, list[float]]]:
    """The training loop; answers the log records and the last iteration's per-prompt group mean
    of the reward's probe (e.g. the channel means of the final latents)."""
    reward_fn: Reward = args.reward_fn
    if args.torch_threads is not None:
        torch.set_num_threads(args.torch_threads)
    objective = Objective(
        args.clip_range, args.adv_clip_max, args.beta, args.max_grad_norm, args.inner_epochs, args.micro_batch
    )
    config = MODELS[args.model]
    policy = Policy(config, args.seed)
    params = select_parameters(policy.dit, args.train)
    optimizer = torch.optim.AdamW(
        params, lr=args.lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=args.weight_decay
    )
    if args.save_rollouts is not None:
        args.save_rollouts.mkdir(parents=True, exist_ok=True)
    args.log.parent.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []
    final_probe: dict[str, list[float]] = {}
    with Client(args.url, args.token) as fleet, args.log.open("w") as log:
        te_version = push(fleet, policy.text_encoder.state_dict(), "text_encoder", args.timeout)
        version = push(fleet, policy.state_dict(), "dit", args.timeout)
        states = {version: policy.state_dict()}
        print(
            f"train.py: pushed text_encoder v{te_version} and dit v{version}; {args.iterations} iterations "
            f"of {len(args.prompts)} prompts × {args.group} seeds, reward {args.reward}; log {args.log}",
            flush=True,
        )
        pending: Batch | None = None
        for n in range(args.iterations):
            started = time.perf_counter()
            request = rollout_request(args, version, te_version)
            batch = pending or enqueue_batch(fleet, n, version, args.prompts, args.group, args.seed, request)
            rollouts = collect(fleet, batch, args.timeout, args.save_rollouts)
            ran_on = check_versions(rollouts, batch, args, te_version)
            pending = None
            if args.max_staleness and n + 1 < args.iterations:
                # The next batch samples while this one trains (it may run one version behind).
                pending = enqueue_batch(fleet, n + 1, version, args.prompts, args.group, args.seed, request)
            rollout_s = time.perf_counter() - started

            started = time.perf_counter()
            scores = score_groups(reward_fn, rollouts, batch.prompts, args.reward_frames)
            rows = build_transitions(
                rollouts, [group_advantages(r) for r in scores.rewards], config, args.timestep_fraction
            )
            stats = train_iteration(policy, optimizer, params, rows, objective, version, states)
            train_s = time.perf_counter() - started

            started = time.perf_counter()
            state = policy.state_dict()
            new_version = push(fleet, state, "dit", args.timeout)
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
                "reward_mean": float(every.mean()),
                "reward_std": float(every.std()),
                "ratio_err_max": stats.ratio_err_max,
                "kl": stats.kl,
                "clip_frac": stats.clip_frac,
                "rollout_s": round(rollout_s, 4),
                "train_s": round(train_s, 4),
                "sync_s": round(sync_s, 4),
            }
            log.write(json.dumps(record) + "\n")
            log.flush()
            records.append(record)
            print(
                f"iter {n:3d} v{ran_on}: reward {record['reward_mean']:+.4f} ± {record['reward_std']:.4f}  "
                f"ratio_err {stats.ratio_err_max:.1e}  kl {stats.kl:.2e}  clip {stats.clip_frac:.2f}  "
                f"rollout {rollout_s:.2f}s train {train_s:.2f}s sync {sync_s:.2f}s → v{new_version}",
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
