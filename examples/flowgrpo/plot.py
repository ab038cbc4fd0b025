"""The reward-over-iterations PNG (matplotlib when installed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


def plot_rewards(
    records: Sequence[dict[str, Any]], out: Path, title: str, baseline: tuple[float, str] | None = None
) -> str:
    """Writes ``out`` (mean ± std of the reward per iteration, and a dashed ``baseline`` level
    when given); answers a one-line note."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return f"plot skipped: matplotlib is not installed (pip install matplotlib) — {out} not written"
    xs = [r["iteration"] for r in records]
    mean = [r["reward_mean"] for r in records]
    std = [r["reward_std"] for r in records]
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=120)
    ax.plot(xs, mean, marker="o", markersize=3, label="mean reward")
    ax.fill_between(
        xs,
        [m - s for m, s in zip(mean, std, strict=True)],
        [m + s for m, s in zip(mean, std, strict=True)],
        alpha=0.25,
        label="± std over samples",
    )
    if baseline is not None:
        ax.axhline(baseline[0], color="grey", linestyle="--", linewidth=1, label=baseline[1])
    ax.set_xlabel("iteration (one weight version each)")
    ax.set_ylabel("reward")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return f"plot: {out}"
