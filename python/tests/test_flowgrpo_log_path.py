"""Where train.py writes its log and plot when ``--log`` is not given: beside the example in a
gitignored ``runs/`` folder, one file per run, whatever the working directory (``npm run train``
runs it from the repository root, which must stay clean)."""

from __future__ import annotations

import importlib
import subprocess
from datetime import datetime, timezone

from fleet_support import REPO
from flowgrpo_support import EXAMPLE  # (and examples/flowgrpo on sys.path, for `train`)

train = importlib.import_module("train")


def test_the_default_log_is_a_gitignored_file_per_run_under_the_example() -> None:
    log = train.parse_args(["--iterations", "1"]).log
    assert log.parent == EXAMPLE / "runs"
    assert log.name.startswith("flowgrpo-") and log.suffix == ".jsonl"
    at = datetime(2026, 12, 5, 7, 30, 1, tzinfo=timezone.utc)
    assert train.default_log_path(at).name == "flowgrpo-20261205T073001Z.jsonl"
    for path in (log, log.with_suffix(".png")):
        ignored = subprocess.run(
            ["git", "check-ignore", "--quiet", str(path.relative_to(REPO))], cwd=REPO, check=False
        )
        assert ignored.returncode == 0, f"{path} is not gitignored"


def test_an_explicit_log_is_kept() -> None:
    assert str(train.parse_args(["--log", "out.jsonl"]).log) == "out.jsonl"
