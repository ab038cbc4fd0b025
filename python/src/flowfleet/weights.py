"""Weights as the fleet takes them: safetensors bytes, from a file, from bytes, or from a
``state_dict`` (torch tensors or numpy arrays) in F32, F16 or BF16. torch is imported only when a
state_dict holds torch tensors (the ``[torch]`` extra)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Union

import numpy as np

from .errors import FlowfleetError, invalid_option
from .safetensors_check import check_safetensors

#: A weights file path, its bytes, or a state_dict (name → torch.Tensor or numpy array).
WeightsSource = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, Mapping[str, Any]]
#: The dtypes a state_dict may hold or be cast to (the workers widen F16/BF16 to float32).
WEIGHT_DTYPES = ("F32", "F16", "BF16")
_NUMPY_DTYPES = {"F32": np.float32, "F16": np.float16}


def read_weights_file(path: str | os.PathLike[str]) -> bytes:
    """A safetensors file's bytes, validated (spec § 2).

    :raises FlowfleetError: ``FMT_FILE_IO``, ``FMT_SAFETENSORS_INVALID``
    """
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as cause:
        raise FlowfleetError(
            "FMT_FILE_IO", f"cannot read weights file {os.fspath(path)}: {cause}", {"path": os.fspath(path)}
        ) from cause
    check_safetensors(data)
    return data


def _check_dtype(dtype: str | None) -> None:
    if dtype is not None and dtype not in WEIGHT_DTYPES:
        raise invalid_option(f"dtype must be one of {', '.join(WEIGHT_DTYPES)}, got {dtype!r}", "dtype")


def _check_names(state_dict: Mapping[str, Any]) -> None:
    if not state_dict:
        raise invalid_option("the state_dict has no tensors", "state_dict")
    for name in state_dict:
        if not isinstance(name, str) or name in ("", "__metadata__"):
            raise invalid_option(f"a tensor name must be a non-empty string, got {name!r}", "state_dict")


def _refuse(name: str, dtype: object) -> FlowfleetError:
    return FlowfleetError(
        "CLIENT_INVALID_OPTIONS",
        f"tensor {name} is {dtype}: weights are F32, F16 or BF16 (pass dtype= to cast)",
        {"option": "state_dict", "tensor": name, "dtype": str(dtype)},
    )


def _torch_state_dict_bytes(state_dict: Mapping[str, Any], dtype: str | None) -> bytes:
    import torch
    from safetensors.torch import save

    by_name = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
    tensors: dict[str, torch.Tensor] = {}
    for name, value in state_dict.items():
        if not isinstance(value, torch.Tensor):
            value = torch.from_numpy(np.ascontiguousarray(value))
        if dtype is None and value.dtype not in by_name.values():
            raise _refuse(name, value.dtype)
        target = value.dtype if dtype is None else by_name[dtype]
        if dtype is not None and not value.is_floating_point():
            raise _refuse(name, value.dtype)
        # A fresh contiguous CPU copy: no shared storage (tied weights), no autograd, no device.
        tensors[name] = value.detach().to(device="cpu", dtype=target, copy=True).contiguous()
    return bytes(save(tensors))


def _numpy_state_dict_bytes(state_dict: Mapping[str, Any], dtype: str | None) -> bytes:
    from safetensors.numpy import save

    if dtype == "BF16":
        raise invalid_option("numpy has no bfloat16: pass torch tensors to upload BF16", "dtype")
    arrays: dict[str, np.ndarray[Any, Any]] = {}
    for name, value in state_dict.items():
        array = np.asarray(value)
        if dtype is None and array.dtype not in (np.float32, np.float16):
            raise _refuse(name, array.dtype)
        if dtype is not None and array.dtype.kind != "f":
            raise _refuse(name, array.dtype)
        target = array.dtype if dtype is None else _NUMPY_DTYPES[dtype]
        arrays[name] = np.ascontiguousarray(array, dtype=np.dtype(target).newbyteorder("<"))
    return bytes(save(arrays))


def weights_bytes(source: WeightsSource, dtype: str | None = None) -> bytes:
    """The safetensors bytes of ``source``: a file path or bytes (validated, sent as they are), or
    a state_dict (torch tensors or numpy arrays; cast to ``dtype`` when given).

    :raises FlowfleetError: ``CLIENT_INVALID_OPTIONS`` (a dtype other than F32/F16/BF16, an empty
        or unnamed tensor set), ``FMT_FILE_IO``, ``FMT_SAFETENSORS_INVALID``
    """
    _check_dtype(dtype)
    if isinstance(source, (str, os.PathLike)):
        if dtype is not None:
            raise invalid_option("dtype casts a state_dict; a file is sent as it is", "dtype")
        return read_weights_file(source)
    if isinstance(source, (bytes, bytearray, memoryview)):
        if dtype is not None:
            raise invalid_option("dtype casts a state_dict; bytes are sent as they are", "dtype")
        data = bytes(source)
        check_safetensors(data)
        return data
    if not isinstance(source, Mapping):
        raise invalid_option(
            f"weights are a safetensors path, bytes or a state_dict, got {type(source).__name__}", "weights"
        )
    _check_names(source)
    uses_torch = any(type(v).__module__.startswith("torch") for v in source.values())
    data = _torch_state_dict_bytes(source, dtype) if uses_torch else _numpy_state_dict_bytes(source, dtype)
    check_safetensors(data)
    return data
