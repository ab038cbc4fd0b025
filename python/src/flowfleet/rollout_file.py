"""RolloutFile v1 (docs/formats/rollout-file-v1.md): read a rollout result into numpy arrays.

The container is checked by :func:`~flowfleet.safetensors_check.check_safetensors` (every rule
of § 2 with the spec's reason ids) and decoded by the ``safetensors`` package; the rollout rules
of § 3–4 follow in the order § 7 gives. A file that passes is a :class:`RolloutFile`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import safetensors

from ._json import DuplicateKeyError, is_integer, is_number, loads_strict
from .errors import FlowfleetError
from .safetensors_check import SafetensorsHeader, check_safetensors, safetensors_invalid

ROLLOUT_FORMAT = "flowfleet.rollout"
ROLLOUT_FORMAT_VERSION = "1"
#: Keys the summary gives the tensors and the attempt; a record may not use them (§ 3.1).
RESERVED_SUMMARY_KEYS: tuple[str, ...] = (
    "id",
    "latents",
    "logProbs",
    "seeds",
    "sigmas",
    "timesteps",
    "stepIndices",
    "worker",
    "timings",
    "captureStats",
)
_METADATA_KEYS = ["format", "format_version", "rollout"]
_NUMPY_DTYPES: Mapping[str, str] = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8"}

FloatArray = npt.NDArray[np.floating[Any]]
#: The package's container parser (untyped): name → {dtype, shape, data}, in its order.
_deserialize = cast(Callable[[bytes], list[tuple[str, dict[str, Any]]]], safetensors.deserialize)


def rollout_invalid(reason: str, message: str, **facts: Any) -> FlowfleetError:
    """``FMT_ROLLOUT_INVALID`` with the spec's reason id in ``details["reason"]``."""
    return FlowfleetError("FMT_ROLLOUT_INVALID", message, {"reason": reason, **facts})


def _nonempty_str(value: object) -> bool:
    return isinstance(value, str) and value != ""


def _record_rules() -> dict[str, Callable[[object], bool]]:
    def str_map(check: Callable[[object], bool]) -> Callable[[object], bool]:
        return lambda v: isinstance(v, dict) and all(_nonempty_str(k) and check(x) for k, x in v.items())

    return {
        "model": _nonempty_str,
        "loopId": _nonempty_str,
        "prompt": lambda v: isinstance(v, str),
        "negativePrompt": lambda v: isinstance(v, str),
        "sampler": lambda v: v in ("sde", "ode"),
        "steps": lambda v: is_integer(v, 1),
        "group": lambda v: is_integer(v, 1),
        "latentDims": lambda v: isinstance(v, list) and len(v) > 0 and all(is_integer(d, 1) for d in v),
        "noiseLevel": is_number,
        "guidanceScale": is_number,
        "shift": lambda v: v is None or is_number(v),
        "weightsVersions": str_map(lambda x: is_integer(x, 0)),
        "backend": str_map(_nonempty_str),
        "platform": lambda v: (
            isinstance(v, dict) and _nonempty_str(v.get("device")) and _nonempty_str(v.get("arch"))
        ),
        "interceptors": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    }


_RECORD_RULES = _record_rules()

#: Optional keys of § 3.1 with a known meaning: checked when present.
CFG_RULES = ("unless-one", "above-one")
_OPTIONAL_RULES: dict[str, Callable[[object], bool]] = {"cfgRule": lambda v: v in CFG_RULES}


def check_record(value: object) -> dict[str, Any]:
    """Checks a record (``__metadata__.rollout``, parsed) against § 3.1; added fields are kept.

    :raises FlowfleetError: ``FMT_ROLLOUT_INVALID`` ``rollout-schema`` with ``details["path"]``
    """
    if not isinstance(value, dict):
        raise rollout_invalid("rollout-schema", "__metadata__.rollout is not an object", path="")
    for key, rule in _RECORD_RULES.items():
        if key not in value or not rule(value[key]):
            problem = "is missing" if key not in value else "has the wrong type or range"
            raise rollout_invalid("rollout-schema", f"__metadata__.rollout {key} {problem}", path=key)
    for key, rule in _OPTIONAL_RULES.items():
        if key in value and not rule(value[key]):
            raise rollout_invalid(
                "rollout-schema", f"__metadata__.rollout {key} has the wrong type or range", path=key
            )
    for key in RESERVED_SUMMARY_KEYS:
        if key in value:
            raise rollout_invalid(
                "rollout-schema", f"__metadata__.rollout {key} is a name the summary reserves", path=key
            )
    return value


def _parse_metadata(metadata: Mapping[str, str]) -> dict[str, Any]:
    fmt, version = metadata.get("format"), metadata.get("format_version")
    if fmt != ROLLOUT_FORMAT:
        raise rollout_invalid("not-rollout", f"format is {fmt!r}, not {ROLLOUT_FORMAT}", format=fmt)
    if version != ROLLOUT_FORMAT_VERSION:
        raise rollout_invalid("unsupported-version", f"format_version {version!r} is not 1", version=version)
    keys = sorted(metadata)
    if keys != _METADATA_KEYS:
        raise rollout_invalid("metadata-keys", f"__metadata__ has keys {', '.join(keys)}", keys=keys)
    try:
        value = loads_strict(metadata["rollout"])
    except DuplicateKeyError as duplicate:
        raise rollout_invalid(
            "rollout-not-json", f"__metadata__.rollout repeats key {duplicate.key}", key=duplicate.key
        ) from None
    except ValueError as cause:
        raise rollout_invalid("rollout-not-json", "__metadata__.rollout is not JSON") from cause
    return check_record(value)


def tensor_layout(metadata: Mapping[str, Any]) -> list[tuple[str, str, tuple[int, ...]]]:
    """The tensors (name, dtype, shape) a file with this record holds, in file order (§ 4)."""
    t, g = int(metadata["steps"]), int(metadata["group"])
    dims = tuple(int(d) for d in metadata["latentDims"])
    layout = [("latents", "F32", (t + 1, g, *dims))]
    if metadata["sampler"] == "sde":
        layout.append(("log_probs", "F64", (t, g)))
    layout += [
        ("seeds", "I64", (g,)),
        ("sigmas", "F64", (t + 1,)),
        ("step_indices", "I32", (t,)),
        ("timesteps", "F64", (t,)),
    ]
    return layout


def _decode(data: memoryview, header: SafetensorsHeader) -> dict[str, bytes]:
    """Each tensor's bytes, decoded by the ``safetensors`` package.

    The package gets the header rewritten canonically (integers, no metadata): the spec accepts
    forms the package's parser refuses (``2.0`` for an integer), and every rule was checked.
    """
    entries = {
        name: {"dtype": e.dtype, "shape": list(e.shape), "data_offsets": [e.begin, e.end]}
        for name, e in header.tensors.items()
    }
    text = json.dumps(entries, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    container = len(text).to_bytes(8, "little") + text + bytes(data[header.data_start :])
    try:
        decoded = _deserialize(container)
    except Exception as cause:  # a defect here or in the package: every rule passed
        raise safetensors_invalid("decode", f"the safetensors package refused the file: {cause}") from cause
    return {name: bytes(info["data"]) for name, info in decoded}


def _check_tensors(
    layout: list[tuple[str, str, tuple[int, ...]]], header: SafetensorsHeader, raw: Mapping[str, bytes]
) -> dict[str, npt.NDArray[Any]]:
    arrays: dict[str, npt.NDArray[Any]] = {}
    for name, dtype, shape in layout:
        entry = header.tensors.get(name)
        if entry is None:
            raise rollout_invalid("missing-tensor", f"no tensor {name}", tensor=name)
        if entry.dtype != dtype:
            raise rollout_invalid(
                "tensor-dtype", f"{name} is {entry.dtype}, not {dtype}", tensor=name, dtype=entry.dtype
            )
        if entry.shape != shape:
            raise rollout_invalid(
                "tensor-shape",
                f"{name} has shape {list(entry.shape)}, not {list(shape)}",
                tensor=name,
                shape=list(entry.shape),
                expected=list(shape),
            )
        array = np.frombuffer(raw[name], dtype=_NUMPY_DTYPES[dtype]).reshape(shape)
        if dtype in ("F32", "F64"):
            bad = np.flatnonzero(~np.isfinite(array))
            if bad.size > 0:
                at = int(bad[0])
                raise rollout_invalid(
                    "non-finite", f"{name}[{at}] is {array.reshape(-1)[at]}", tensor=name, index=at
                )
        arrays[name] = array
    seeds = arrays["seeds"]
    bad = np.flatnonzero((seeds < 0) | (seeds > 2**53 - 1))
    if bad.size > 0:
        at = int(bad[0])
        raise rollout_invalid(
            "seed-range", f"seed {int(seeds[at])} is outside [0, 2^53)", tensor="seeds", index=at
        )
    return arrays


@dataclass(frozen=True)
class RolloutFile:
    """One rollout group's trajectory (RolloutFile v1); arrays are read-only and row-major.

    T = ``steps``, G = ``group``; one sample's latent has ``latent_dims``.
    """

    #: The record (``__metadata__.rollout``): model, sampler, weightsVersions, …, added fields kept.
    metadata: dict[str, Any]
    #: float32 [T + 1, G, *latent_dims]: x_0 (the initial noise) … x_T (the samples).
    latents: npt.NDArray[np.float32]
    #: float64 [T, G] (step-major) for ``sde``; None for ``ode`` (the file has no tensor).
    log_probs: npt.NDArray[np.float64] | None
    #: int64 [G], each in [0, 2^53).
    seeds: npt.NDArray[np.int64]
    #: float64 [T + 1]: σ_0 … σ_T.
    sigmas: npt.NDArray[np.float64]
    #: float64 [T]: the timestep step t's forward was given.
    timesteps: npt.NDArray[np.float64]
    #: int32 [T]: the step index of each row of ``log_probs``.
    step_indices: npt.NDArray[np.int32]

    @property
    def steps(self) -> int:
        return int(self.metadata["steps"])

    @property
    def group(self) -> int:
        return int(self.metadata["group"])

    @property
    def latent_dims(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self.metadata["latentDims"])

    @property
    def final_latents(self) -> npt.NDArray[np.float32]:
        """x_T of every sample: [G, *latent_dims]."""
        return cast(npt.NDArray[np.float32], self.latents[-1])

    def latent(self, step: int, sample: int) -> npt.NDArray[np.float32]:
        """Sample ``sample`` after ``step`` denoise steps (a view).

        :raises FlowfleetError: ``FMT_INVALID_ARGUMENT`` for an index outside the file
        """
        _check_index(step, self.steps + 1, "step")
        _check_index(sample, self.group, "sample")
        return cast(npt.NDArray[np.float32], self.latents[step, sample])

    def log_probs_of(self, sample: int) -> npt.NDArray[np.float64] | None:
        """Sample ``sample``'s per-step log-probs [T] (None for ``ode``).

        :raises FlowfleetError: ``FMT_INVALID_ARGUMENT`` for an index outside the file
        """
        _check_index(sample, self.group, "sample")
        return None if self.log_probs is None else self.log_probs[:, sample]

    def summary_fields(self) -> dict[str, Any]:
        """The record-derived part of the summary (§ 5 without id, worker, timings, captureStats)."""
        return {
            **self.metadata,
            "seeds": self.seeds.tolist(),
            "sigmas": self.sigmas.tolist(),
            "timesteps": self.timesteps.tolist(),
            "stepIndices": self.step_indices.tolist(),
            "logProbs": None if self.log_probs is None else self.log_probs.tolist(),
        }

    def to_json(self) -> dict[str, Any]:
        """The canonical JSON of the file (§ 6): ``{metadata, tensors, summary}``."""
        tensors: dict[str, Any] = {}
        arrays = {
            "latents": self.latents,
            "log_probs": self.log_probs,
            "seeds": self.seeds,
            "sigmas": self.sigmas,
            "step_indices": self.step_indices,
            "timesteps": self.timesteps,
        }
        for name, dtype, shape in tensor_layout(self.metadata):
            array = arrays[name]
            assert array is not None
            tensors[name] = {"dtype": dtype, "shape": list(shape), "values": array.reshape(-1).tolist()}
        return {"metadata": self.metadata, "tensors": tensors, "summary": self.summary_fields()}


def _check_index(value: int, size: int, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < size:
        raise FlowfleetError(
            "FMT_INVALID_ARGUMENT", f"{what} {value!r} is outside [0, {size})", {what: value, "size": size}
        )


def read_rollout_file(data: bytes | bytearray | memoryview) -> RolloutFile:
    """Reads a RolloutFile v1, refusing what § 7 refuses, in its order.

    :raises FlowfleetError: ``FMT_SAFETENSORS_INVALID`` or ``FMT_ROLLOUT_INVALID`` with
        ``details["reason"]`` (the spec's reason id)
    """
    view = memoryview(data).cast("B")
    header = check_safetensors(view)
    metadata = _parse_metadata(header.metadata)
    layout = tensor_layout(metadata)
    expected = {name for name, _, _ in layout}
    unexpected = [name for name in header.tensors if name not in expected]
    if unexpected:
        raise rollout_invalid(
            "unexpected-tensor", f"unexpected tensors {', '.join(unexpected)}", tensors=unexpected
        )
    arrays = _check_tensors(layout, header, _decode(view, header))
    return RolloutFile(
        metadata=metadata,
        latents=arrays["latents"],
        log_probs=arrays.get("log_probs"),
        seeds=arrays["seeds"],
        sigmas=arrays["sigmas"],
        timesteps=arrays["timesteps"],
        step_indices=arrays["step_indices"],
    )
