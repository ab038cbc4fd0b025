"""The figures of a run (``--summary``): reward at the start and the end, the log-prob ratio
error, and where each iteration's time went."""

from __future__ import annotations

import json
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

#: The bound every iteration's ratio_err_max is held to (issue 11; verl-omni reports ~1e-5).
RATIO_ERR_BOUND = 1e-5


def _window(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {
        "iterations": [r["iteration"] for r in records],
        "reward_mean": [r["reward_mean"] for r in records],
        "reward_std": [r["reward_std"] for r in records],
        "mean_of_means": float(np.mean([r["reward_mean"] for r in records])),
    }


def summarize(records: Sequence[dict[str, Any]], settings: dict[str, Any]) -> dict[str, Any]:
    """The run's figures (first and last three iterations, ratio error, time split)."""
    errs = [r["ratio_err_max"] for r in records]
    times = {k: [r[f"{k}_s"] for r in records] for k in ("rollout", "train", "sync")}
    total = [sum(parts) for parts in zip(*times.values(), strict=True)]
    return {
        "reward": records[0]["reward"],
        "iterations": len(records),
        "first3": _window(records[:3]),
        "last3": _window(records[-3:]),
        "reward_gain": float(np.mean([r["reward_mean"] for r in records[-3:]]))
        - float(np.mean([r["reward_mean"] for r in records[:3]])),
        "ratio_err_max": max(errs),
        "ratio_err_bound": RATIO_ERR_BOUND,
        "ratio_err_within_bound_every_iteration": all(e <= RATIO_ERR_BOUND for e in errs),
        "kl_last": records[-1]["kl"],
        "clip_frac_mean": float(np.mean([r["clip_frac"] for r in records])),
        "seconds_per_iteration": {
            **{k: {"mean": float(np.mean(v)), "median": float(np.median(v))} for k, v in times.items()},
            "total": {"mean": float(np.mean(total)), "median": float(np.median(total))},
        },
        "wall_s": float(sum(total)),
        "settings": settings,
        "machine": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "cpus": torch.get_num_threads(),
        },
    }


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=2) + "\n")
