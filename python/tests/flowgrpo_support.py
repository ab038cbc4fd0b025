"""What the FlowGRPO example's tests share: its folder on ``sys.path`` (the example's modules
import each other by name, as ``python examples/flowgrpo/train.py`` runs them) and a way to run
train.py as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from fleet_support import REPO

EXAMPLE = REPO / "examples" / "flowgrpo"
TRAIN = EXAMPLE / "train.py"
if str(EXAMPLE) not in sys.path:
    sys.path.insert(0, str(EXAMPLE))


def run_trainer(*args: str, timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    """``python examples/flowgrpo/train.py ARGS`` with this interpreter."""
    return subprocess.run(
        [sys.executable, str(TRAIN), *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


#: The keys of every log line, exactly (issue 11; issue 19 adds the embeddings, reward and LoRA
#: figures).
LOG_KEYS = {
    "iteration",
    "weights_version",
    "reward",
    "prompts",
    "group_size",
    "request",
    "prompt_embeds",
    "reward_mean",
    "reward_std",
    "ratio_err_max",
    "kl",
    "clip_frac",
    "rollout_s",
    "reward_s",
    "train_s",
    "sync_s",
    "adapter_bytes",
    "peak_rss_mb",
}
