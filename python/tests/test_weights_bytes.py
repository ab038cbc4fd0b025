"""Weights as the fleet takes them, without a fleet: safetensors bytes from a file, from bytes,
and from a torch or numpy state_dict in F32/F16/BF16; the refusals' codes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load

from fleet_support import VECTORS
from flowfleet import FlowfleetError, check_safetensors, weights_bytes


def header_of(data: bytes) -> dict[str, dict[str, object]]:
    n = int.from_bytes(data[:8], "little")
    return json.loads(data[8 : 8 + n])


def state_dict() -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(7)
    weight = torch.nn.Parameter(torch.randn(4, 3, generator=generator))
    return {"blocks.0.weight": weight, "blocks.0.bias": torch.randn(4, generator=generator), "tied": weight}


@pytest.mark.parametrize(
    ("dtype", "torch_dtype"), [("F32", torch.float32), ("F16", torch.float16), ("BF16", torch.bfloat16)]
)
def test_a_torch_state_dict_becomes_safetensors_in_each_dtype(dtype: str, torch_dtype: torch.dtype) -> None:
    source = state_dict()
    data = weights_bytes(source, dtype)
    assert {name: entry["dtype"] for name, entry in header_of(data).items()} == dict.fromkeys(source, dtype)
    back = load(data)
    for name, tensor in source.items():
        assert torch.equal(back[name], tensor.detach().to(torch_dtype))
    assert weights_bytes(source, dtype) == data  # deterministic: the same blob, the same sha256


def test_a_state_dict_keeps_its_own_half_dtypes_and_refuses_others() -> None:
    mixed = {"a": torch.ones(2, dtype=torch.bfloat16), "b": torch.ones(3, dtype=torch.float16)}
    assert {k: v["dtype"] for k, v in header_of(weights_bytes(mixed)).items()} == {"a": "BF16", "b": "F16"}
    for bad in ({"steps": torch.arange(3)}, {"x": torch.ones(2, dtype=torch.float64)}):
        with pytest.raises(FlowfleetError) as refused:
            weights_bytes(bad)
        assert (
            refused.value.code == "CLIENT_INVALID_OPTIONS" and refused.value.details["option"] == "state_dict"
        )
    # A cast names the target; integers are never weights.
    assert header_of(weights_bytes({"x": torch.ones(2, dtype=torch.float64)}, "F32"))["x"]["dtype"] == "F32"
    with pytest.raises(FlowfleetError):
        weights_bytes({"steps": torch.arange(3)}, "F32")


def test_bf16_is_the_top_half_of_binary32() -> None:
    value = torch.tensor([1.0 + 2**-7, -3.5, 2**-133], dtype=torch.float32)
    data = weights_bytes({"w": value}, "BF16")
    raw = np.frombuffer(data[-6:], dtype="<u2").astype(np.uint32) << 16
    assert raw.view(np.float32).tolist() == value.to(torch.bfloat16).to(torch.float32).tolist()


def test_a_numpy_state_dict_in_f32_and_f16() -> None:
    arrays = {"w": np.arange(6, dtype=np.float32).reshape(2, 3)}
    assert header_of(weights_bytes(arrays))["w"] == {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}
    assert header_of(weights_bytes(arrays, "F16"))["w"]["dtype"] == "F16"
    with pytest.raises(FlowfleetError) as no_bf16:
        weights_bytes(arrays, "BF16")
    assert no_bf16.value.code == "CLIENT_INVALID_OPTIONS"
    with pytest.raises(FlowfleetError) as ints:
        weights_bytes({"w": np.arange(3)})
    assert ints.value.code == "CLIENT_INVALID_OPTIONS"


def test_files_and_bytes_are_validated_and_sent_as_they_are(tmp_path: Path) -> None:
    good = weights_bytes({"w": torch.zeros(3)})
    path = tmp_path / "w.safetensors"
    path.write_bytes(good)
    assert weights_bytes(path) == good and weights_bytes(str(path)) == good and weights_bytes(good) == good
    with pytest.raises(FlowfleetError) as missing:
        weights_bytes(tmp_path / "absent.safetensors")
    assert missing.value.code == "FMT_FILE_IO"
    broken = (VECTORS / "invalid" / "overlap.safetensors").read_bytes()
    with pytest.raises(FlowfleetError) as invalid:
        weights_bytes(broken)
    assert (invalid.value.code, invalid.value.reason) == ("FMT_SAFETENSORS_INVALID", "overlap")
    for bad in ({}, {"": torch.zeros(1)}, 42):
        with pytest.raises(FlowfleetError) as refused:
            weights_bytes(bad)  # type: ignore[arg-type]
        assert refused.value.code == "CLIENT_INVALID_OPTIONS"
    with pytest.raises(FlowfleetError) as cast_a_file:
        weights_bytes(path, "F16")
    assert cast_a_file.value.code == "CLIENT_INVALID_OPTIONS"
    assert check_safetensors(good).tensors["w"].shape == (3,)
