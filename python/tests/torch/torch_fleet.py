"""The fleet side of the torch tests: runs ``scripts/forward-wan21.ts`` (the worker's own weight
check, ort-cpu components and runtime) on a job of tasks, and the error figures of a comparison."""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file

REPO = Path(__file__).resolve().parents[3]
SCRIPT = "scripts/forward-wan21.ts"

ConfigSpec = str | Mapping[str, Any]


@dataclass(frozen=True)
class JobResult:
    """What the script printed: the card's TS config, the stated tolerance, one result per task."""

    config: dict[str, Any]
    tolerance: dict[str, float]
    results: list[Any]


def run_job(config: ConfigSpec, tasks: Sequence[Mapping[str, Any]], workdir: Path) -> JobResult:
    """Runs one job in a node process (``npx tsx --conditions=@flowfleet/source``)."""
    job = workdir / f"job-{len(list(workdir.glob('job-*.json')))}.json"
    job.write_text(json.dumps({"config": config, "tasks": list(tasks)}))
    proc = subprocess.run(
        ["npx", "tsx", "--conditions=@flowfleet/source", SCRIPT, str(job)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{SCRIPT} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return JobResult(out["config"], out["tolerance"], out["results"])


def save_weights(state: Mapping[str, torch.Tensor], path: Path, dtype: torch.dtype) -> Path:
    """A module's state_dict as a fleet weight blob of ``dtype`` (F32, F16 or BF16)."""
    save_file({k: v.detach().to(dtype).contiguous() for k, v in state.items()}, str(path))
    return path


@dataclass(frozen=True)
class Figures:
    """Errors of ``actual`` against ``expected``: max-abs, max elementwise-rel (``within``'s
    rel, |a − b| / max(|a|, |b|)), norm-relative ‖a − b‖₂/‖b‖₂ and max |expected|."""

    max_abs: float
    max_rel: float
    norm_rel: float
    max_ref: float

    def passes(self, tolerance: Mapping[str, float], amplification: float = 1.0) -> bool:
        """``within``'s rule: max-abs ≤ atol·amplification or max-rel ≤ rtol."""
        return self.max_abs <= tolerance["atol"] * amplification or self.max_rel <= tolerance["rtol"]

    def __str__(self) -> str:
        return (
            f"maxAbs {self.max_abs:.2e} maxRel {self.max_rel:.2e} normRel {self.norm_rel:.2e} "
            f"(max|ref| {self.max_ref:.2f})"
        )


def figures(actual: torch.Tensor, expected: torch.Tensor) -> Figures:
    """Error figures in float64; shapes must match."""
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    a = actual.detach().to(torch.float64)
    b = expected.detach().to(torch.float64)
    if not (torch.isfinite(a).all() and torch.isfinite(b).all()):
        return Figures(math.inf, math.inf, math.inf, b.abs().max().item())
    diff = (a - b).abs()
    scale = torch.maximum(a.abs(), b.abs())
    rel = torch.where(scale > 0, diff / scale.clamp_min(1e-300), torch.zeros_like(diff))
    ref_norm = b.norm().item()
    return Figures(
        max_abs=diff.max().item(),
        max_rel=rel.max().item(),
        norm_rel=diff.norm().item() / ref_norm if ref_norm > 0 else math.inf,
        max_ref=b.abs().max().item(),
    )
