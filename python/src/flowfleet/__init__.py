"""flowfleet: the Python SDK of a flowfleet coordinator.

Enqueue rollouts and rounds, wait for them, read their results (RolloutFile v1) as numpy arrays,
push weights (a safetensors file, a sharded checkpoint directory, a LoRA adapter or a torch
``state_dict``) and wait for the fleet's acks. Every
failure is a :class:`FlowfleetError` with a code from docs/errors.md.
"""

from .checkpoint import Checkpoint, open_checkpoint
from .client import DEFAULT_RETRY, DEFAULT_TIMEOUT_S, Client, PushedWeights
from .errors import CLIENT_CODES, FlowfleetError
from .retry import RetryPolicy
from .rollout_file import (
    ROLLOUT_FORMAT,
    ROLLOUT_FORMAT_VERSION,
    ROLLOUT_FORMAT_VERSIONS,
    RolloutFile,
    read_rollout_file,
)
from .safetensors_check import check_safetensors, read_safetensors_header
from .transport import Call, RetryEvent
from .waiting import SyncProgress
from .weights import WEIGHT_DTYPES, weights_bytes

__version__ = "0.1.0"

__all__ = [
    "CLIENT_CODES",
    "Call",
    "Checkpoint",
    "Client",
    "DEFAULT_RETRY",
    "DEFAULT_TIMEOUT_S",
    "FlowfleetError",
    "PushedWeights",
    "ROLLOUT_FORMAT",
    "ROLLOUT_FORMAT_VERSION",
    "ROLLOUT_FORMAT_VERSIONS",
    "RetryEvent",
    "RetryPolicy",
    "RolloutFile",
    "SyncProgress",
    "WEIGHT_DTYPES",
    "check_safetensors",
    "open_checkpoint",
    "read_safetensors_header",
    "read_rollout_file",
    "weights_bytes",
]
