"""Loading a fleet weight blob (safetensors, F32/F16/BF16) into a module, strictly."""

from __future__ import annotations

import os
from typing import Union

from safetensors.torch import load, load_file
from torch import nn

Source = Union[str, "os.PathLike[str]", bytes]


def load_fleet_weights(module: nn.Module, source: Source) -> nn.Module:
    """Loads a safetensors weight set (a path, or the blob's bytes as the fleet serves it) into
    ``module`` with ``load_state_dict(strict=True)``: every name must be present, none extra, and
    shapes must match. F16/BF16 tensors widen to the module's dtype (as the worker widens them to
    float32). Raises ``RuntimeError`` from ``load_state_dict`` on a mismatch."""
    tensors = load(source) if isinstance(source, bytes) else load_file(os.fspath(source))
    module.load_state_dict(tensors, strict=True)
    return module
