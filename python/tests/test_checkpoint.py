"""``open_checkpoint`` follows formats' rules: an index checked against its shards' headers (every
disagreement listed), one file or one index per directory; headers read without the data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from flowfleet import FlowfleetError, open_checkpoint, read_safetensors_header


def test_an_index_that_disagrees_with_its_shards_lists_every_problem(tmp_path: Path) -> None:
    save_file({"a": np.ones(2, np.float32), "b": np.ones(1, np.float32)}, str(tmp_path / "m-1.safetensors"))
    save_file({"c": np.ones(3, np.float32), "b": np.ones(1, np.float32)}, str(tmp_path / "m-2.safetensors"))
    weight_map = {
        "a": "m-2.safetensors",
        "b": "m-1.safetensors",
        "c": "m-2.safetensors",
        "d": "m-1.safetensors",
    }
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    with pytest.raises(FlowfleetError) as refused:
        open_checkpoint(tmp_path)
    assert refused.value.code == "FMT_CHECKPOINT_INVALID" and refused.value.reason == "index-mismatch"
    assert refused.value.details["problems"] == [
        "a is in m-1.safetensors, the weight_map says m-2.safetensors",
        "b is in both m-1.safetensors and m-2.safetensors",
        "b is in m-2.safetensors, the weight_map says m-1.safetensors",
        "d is not in m-1.safetensors",
    ]


def test_a_header_is_read_and_checked_without_the_data(tmp_path: Path) -> None:
    path = tmp_path / "w.safetensors"
    save_file({"w": np.arange(6, dtype=np.float32).reshape(2, 3)}, str(path))
    header = read_safetensors_header(path)
    assert header.tensors["w"].shape == (2, 3) and header.tensors["w"].dtype == "F32"
    assert open_checkpoint(path).shards == (path,)
    path.write_bytes(path.read_bytes()[:-4])
    with pytest.raises(FlowfleetError) as truncated:
        read_safetensors_header(path)
    assert truncated.value.reason == "truncated"
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FlowfleetError) as none:
        open_checkpoint(empty)
    assert none.value.reason == "no-safetensors"
