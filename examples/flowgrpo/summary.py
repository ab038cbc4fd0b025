"""The figures of a run (``--summary``, what ``npm run bench:train`` writes to
bench/results/train.json in the bench files' layout: ``benchmark``, ``at``, ``machine``,
``figures``, ``setup``): reward at the start and the end, the log-prob ratio error, and where
each iteration's time went."""

from __future__ import annotations

import datetime
import json
import os
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

#: The bound every iteration's ratio_err_max is held to (issue 11; verl-omni reports ~1e-5).
RATIO_ERR_BOUND = 1e-5


def _window(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    means = [r["reward_mean"] for r in records]
    return {
        "iterations": [r["iteration"] for r in records],
        "rewardMean": [round(m, 5) for m in means],
        "rewardStd": [round(r["reward_std"], 5) for r in records],
        "meanOfMeans": round(float(np.mean(means)), 5),
    }


def _stats(values: Sequence[float]) -> dict[str, float]:
    return {"mean": round(float(np.mean(values)), 4), "median": round(float(np.median(values)), 4)}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def summarize(
    records: Sequence[dict[str, Any]],
    setup: dict[str, Any],
    baseline: tuple[float, str] | None = None,
    final_probe: tuple[str, dict[str, list[float]]] | None = None,
) -> dict[str, Any]:
    """The run's figures (first and last three iterations, ratio error, time split), the reward's
    baseline level, and the last iteration's per-prompt group mean of the reward's probe
    (``(key, values)``: ``finalChannelMeans`` of the final latents, ``finalMeanColors`` of the
    frames)."""
    errs = [r["ratio_err_max"] for r in records]
    times = {k: [r[f"{k}_s"] for r in records] for k in ("rollout", "reward", "train", "sync")}
    total = [sum(parts) for parts in zip(*times.values(), strict=True)]
    first, last = _window(records[:3]), _window(records[-3:])
    figures: dict[str, Any] = {
        "reward": records[0]["reward"],
        "iterations": len(records),
        "first3": first,
        "last3": last,
        "rewardGain": round(last["meanOfMeans"] - first["meanOfMeans"], 5),
    }
    if baseline is not None:
        figures["baseline"] = {"reward": round(baseline[0], 5), "meaning": baseline[1]}
    figures |= {
        "ratioErrMax": max(errs),
        "ratioErrBound": RATIO_ERR_BOUND,
        "ratioErrWithinBoundEveryIteration": all(e <= RATIO_ERR_BOUND for e in errs),
        "klLast": round(records[-1]["kl"], 5),
        "clipFracMean": round(float(np.mean([r["clip_frac"] for r in records])), 4),
        "secondsPerIteration": {**{k: _stats(v) for k, v in times.items()}, "total": _stats(total)},
        "wallS": round(float(sum(total)), 2),
    }
    if final_probe is not None:
        figures[final_probe[0]] = final_probe[1]
    return {
        "benchmark": "train",
        "at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds"),
        "machine": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "torchThreads": torch.get_num_threads(),
            "cpus": os.cpu_count() or 0,
            "cpuModel": _cpu_model(),
            "loadAvg1m": round(os.getloadavg()[0], 2),
        },
        "figures": figures,
        "setup": setup,
    }


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=2) + "\n")
