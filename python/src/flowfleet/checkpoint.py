"""Checkpoints on disk as the fleet takes them: one safetensors file, a directory holding one (a
PEFT adapter directory too), or the shards a ``*.safetensors.index.json`` names — the rules of
formats' ``openSafetensorsCheckpoint`` (packages/formats), reading only headers."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import FlowfleetError
from .safetensors_check import SafetensorsHeader, read_safetensors_header

#: The suffix of a sharded checkpoint's index.
INDEX_SUFFIX = ".safetensors.index.json"


@dataclass(frozen=True)
class Checkpoint:
    """The files of a checkpoint in code point order of their names, and the index if sharded."""

    shards: tuple[Path, ...]
    headers: tuple[SafetensorsHeader, ...]
    index_path: Path | None


def _invalid(path: Path, reason: str, message: str, **facts: Any) -> FlowfleetError:
    return FlowfleetError(
        "FMT_CHECKPOINT_INVALID", f"{path}: {message}", {"path": str(path), "reason": reason, **facts}
    )


def _weight_map(index_path: Path) -> dict[str, str]:
    try:
        value = json.loads(index_path.read_text(encoding="utf-8"))
    except OSError as cause:
        raise FlowfleetError(
            "FMT_FILE_IO", f"cannot read {index_path}: {cause}", {"path": str(index_path)}
        ) from cause
    except ValueError:
        raise _invalid(index_path, "index-invalid", "the index is not JSON") from None
    weight_map = value.get("weight_map") if isinstance(value, dict) else None
    if not isinstance(weight_map, dict) or not weight_map:
        raise _invalid(index_path, "index-invalid", "the index has no (non-empty) weight_map object")
    for tensor, file in weight_map.items():
        if not isinstance(file, str) or file == "" or os.path.basename(file) != file:
            raise _invalid(
                index_path, "index-invalid", f"weight_map[{tensor!r}] is not a file name", tensor=tensor
            )
    return dict(weight_map)


def _indexed(index_path: Path) -> Checkpoint:
    weight_map = _weight_map(index_path)
    files = sorted(set(weight_map.values()))
    paths = tuple(index_path.parent / file for file in files)
    headers = tuple(read_safetensors_header(path) for path in paths)
    problems: list[str] = []
    holder: dict[str, str] = {}
    for file, header in zip(files, headers, strict=True):
        for tensor in header.tensors:
            if tensor in holder:
                problems.append(f"{tensor} is in both {holder[tensor]} and {file}")
            holder[tensor] = file
            listed = weight_map.get(tensor)
            if listed is None:
                problems.append(f"{tensor} (in {file}) is not in the weight_map")
            elif listed != file:
                problems.append(f"{tensor} is in {file}, the weight_map says {listed}")
    problems += [f"{tensor} is not in {file}" for tensor, file in weight_map.items() if tensor not in holder]
    if problems:
        raise _invalid(
            index_path,
            "index-mismatch",
            f"the index and its shards disagree ({'; '.join(problems[:3])})",
            problems=problems,
        )
    return Checkpoint(paths, headers, index_path)


def open_checkpoint(path: str | os.PathLike[str]) -> Checkpoint:
    """The checkpoint at ``path``: a safetensors file, an index file, or a directory with one
    ``*.safetensors.index.json`` or exactly one ``*.safetensors`` file.

    :raises FlowfleetError: ``FMT_CHECKPOINT_INVALID`` (``details["reason"]``),
        ``FMT_SAFETENSORS_INVALID`` (a shard's header), ``FMT_FILE_IO``
    """
    root = Path(path)
    if not root.exists():
        raise FlowfleetError(
            "FMT_FILE_IO", f"cannot read {root}: no such file or directory", {"path": str(root)}
        )
    if not root.is_dir():
        if root.name.endswith(INDEX_SUFFIX):
            return _indexed(root)
        return Checkpoint((root,), (read_safetensors_header(root),), None)
    names = sorted(entry.name for entry in root.iterdir())
    indexes = [name for name in names if name.endswith(INDEX_SUFFIX)]
    if len(indexes) > 1:
        raise _invalid(root, "several-indexes", f"has several indexes ({', '.join(indexes)})", files=indexes)
    if indexes:
        return _indexed(root / indexes[0])
    files = [name for name in names if name.endswith(".safetensors")]
    if not files:
        raise _invalid(root, "no-safetensors", "has no .safetensors file")
    if len(files) > 1:
        raise _invalid(
            root,
            "several-files",
            f"has {len(files)} .safetensors files and no {INDEX_SUFFIX} naming them",
            files=files,
        )
    only = root / files[0]
    return Checkpoint((only,), (read_safetensors_header(only),), None)


__all__ = ["INDEX_SUFFIX", "Checkpoint", "open_checkpoint"]
