#!/usr/bin/env python3
"""A minimal flowfleet trainer step in Python, on the SDK (``pip install ./python``).

Enqueues one rollout (a prompt x a group of seeds, SDE) on a coordinator, waits for it (a tqdm
bar when tqdm is installed and stdout is a terminal, else a line per change), reads the result
(RolloutFile v1) as numpy arrays and prints the per-step log-probs and a group-normalised
advantage of each sample.

    .venv/bin/python examples/python/trainer.py --url http://127.0.0.1:8080 --token "$TRAINER_TOKEN"

URL and token also come from FLOWFLEET_URL and FLOWFLEET_TOKEN (`flowfleet up` prints both).
Exit codes: 0 ok, 1 a coded failure (printed as ``error: CODE: message``), 2 usage.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from flowfleet import Client, FlowfleetError
from flowfleet.types import JobStatus


def parse_seeds(text: str) -> list[int]:
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        seeds.extend(range(int(low), int(high or low) + 1))
    return seeds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Enqueue a flowfleet rollout and read its log-probs.")
    parser.add_argument("--url", default=os.environ.get("FLOWFLEET_URL", "http://127.0.0.1:8080"))
    parser.add_argument("--token", default=os.environ.get("FLOWFLEET_TOKEN"))
    parser.add_argument("--prompt", default="a red fox running through fresh snow")
    parser.add_argument("--seeds", type=parse_seeds, default=[1, 2, 3, 4], help="e.g. 1,2,3 or 1-4")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--frames", type=int, default=1)
    parser.add_argument("--size", type=int, default=8, help="latent height and width")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for the rollout")
    args = parser.parse_args(argv)

    def report(status: JobStatus) -> None:
        if not sys.stdout.isatty():
            p = status["progress"]
            worker = f" on {status['worker']}" if "worker" in status else ""
            print(f"  {status['status']:<9} step {p['step']}/{p['steps']}{worker}", flush=True)

    try:
        with Client(args.url, args.token) as fleet:
            enqueued = fleet.enqueue_rollouts(
                {
                    "model": "wan21-mini",
                    "prompt": args.prompt,
                    "seeds": args.seeds,
                    "steps": args.steps,
                    "sampler": "sde",
                    "shape": {"frames": args.frames, "height": args.size, "width": args.size},
                }
            )
            print(f"enqueued {enqueued['id']} on {enqueued['lane']} ({enqueued['eligibleWorkers']} eligible workers)")
            status = fleet.wait_for(enqueued["id"], on_progress=report, timeout_s=args.timeout)
            summary = status["summary"]
            backends = ",".join(sorted(set(summary["backend"].values())))
            print(
                f"completed on {summary['worker']} ({backends}) in {summary['timings']['totalMs']:.0f} ms, "
                f"weights {summary['weightsVersions']}"
            )
            rollout = fleet.get_result(enqueued["id"])
    except FlowfleetError as error:
        print(f"error: {error.code}: {error.message}", file=sys.stderr)
        return 1

    print(f"latents   {rollout.latents.dtype} {list(rollout.latents.shape)}  (T+1, G, *latentDims)")
    assert rollout.log_probs is not None  # an SDE rollout has per-step log-probs
    print(f"log_probs {rollout.log_probs.dtype} {list(rollout.log_probs.shape)}  (step-major)")
    # A stand-in reward (the mean of latent channel 0 of each final sample) and its advantage.
    rewards = rollout.final_latents[:, 0].reshape(rollout.group, -1).mean(axis=1).astype(np.float64)
    advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-6)
    for sample, seed in enumerate(rollout.seeds.tolist()):
        row = rollout.log_probs[:, sample]
        steps = " ".join(f"{v:.6f}" for v in row)
        print(f"  seed {seed}: sum {row.sum():.6f}  per step {steps}  advantage {advantages[sample]:+.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
