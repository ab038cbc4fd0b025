"""RolloutFile v1 and v2 (docs/formats/rollout-file-v1.md, rollout-file-v2.md): read a rollout
result into numpy arrays — the trajectory latents, log-probs and, in v2, decoded frames.

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
#: The version of a latents-only rollout (every trajectory latent, no frames).
ROLLOUT_FORMAT_VERSION = "1"
#: The versions this reader reads: v2 adds decoded frames and a kept-steps window.
ROLLOUT_FORMAT_VERSIONS = ("1", "2")
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
#: v2 reserves the summary names of its added tensors as well.
RESERVED_SUMMARY_KEYS_V2: tuple[str, ...] = (*RESERVED_SUMMARY_KEYS, "latentSteps", "frameIndices")
_METADATA_KEYS = ["format", "format_version", "rollout"]
_NUMPY_DTYPES: Mapping[str, str] = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8", "U8": "u1"}
_VIDEO_KEYS = ("frames", "height", "width")

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


def _is_video(value: object) -> bool:
    return value is None or (
        isinstance(value, dict)
        and sorted(value) == sorted(_VIDEO_KEYS)
        and all(is_integer(value[k], 1) for k in _VIDEO_KEYS)
    )


def check_record(value: object, version: str = "1") -> dict[str, Any]:
    """Checks a record (``__metadata__.rollout``, parsed) against § 3.1 of its version (v2 adds
    the required ``video``: null or ``{frames, height, width}``); added fields are kept.

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
    if version == "2" and ("video" not in value or not _is_video(value["video"])):
        problem = "is missing" if "video" not in value else "has the wrong type or range"
        raise rollout_invalid("rollout-schema", f"__metadata__.rollout video {problem}", path="video")
    if version == "1" and "video" in value:
        raise rollout_invalid("rollout-schema", "__metadata__.rollout video is a v2 field", path="video")
    for key in RESERVED_SUMMARY_KEYS_V2 if version == "2" else RESERVED_SUMMARY_KEYS:
        if key in value:
            raise rollout_invalid(
                "rollout-schema", f"__metadata__.rollout {key} is a name the summary reserves", path=key
            )
    return value


def _parse_metadata(metadata: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    fmt, version = metadata.get("format"), metadata.get("format_version")
    if fmt != ROLLOUT_FORMAT:
        raise rollout_invalid("not-rollout", f"format is {fmt!r}, not {ROLLOUT_FORMAT}", format=fmt)
    if version not in ROLLOUT_FORMAT_VERSIONS:
        raise rollout_invalid(
            "unsupported-version", f"format_version {version!r} is not one of 1, 2", version=version
        )
    assert version is not None
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
    return version, check_record(value, version)


#: One tensor of a layout: name, dtype, shape, and for v2's index tensors the bound on their
#: length (rank 1, 1 ≤ length ≤ bound, whatever the shape says).
TensorSpec = tuple[str, str, tuple[int, ...], int | None]


def format_version_of(metadata: Mapping[str, Any]) -> str:
    """The version a record is written in: 2 when it has v2's ``video`` key, else 1."""
    return "2" if "video" in metadata else "1"


def tensor_layout(metadata: Mapping[str, Any], kept: int | None = None, frames: int = 0) -> list[TensorSpec]:
    """The tensors a file with this record holds, in the order § 7 checks them (v2: with ``kept``
    latent rows and ``frames`` returned frames)."""
    t, g = int(metadata["steps"]), int(metadata["group"])
    dims = tuple(int(d) for d in metadata["latentDims"])
    v2 = format_version_of(metadata) == "2"
    k = t + 1 if kept is None or not v2 else kept
    layout: list[TensorSpec] = []
    if v2:
        layout.append(("latent_steps", "I32", (k,), t + 1))
    layout.append(("latents", "F32", (k, g, *dims), None))
    if metadata["sampler"] == "sde":
        layout.append(("log_probs", "F64", (t, g), None))
    layout += [
        ("seeds", "I64", (g,), None),
        ("sigmas", "F64", (t + 1,), None),
        ("step_indices", "I32", (t,), None),
        ("timesteps", "F64", (t,), None),
    ]
    video = metadata.get("video") if v2 else None
    if video is not None:
        h, w = int(video["height"]), int(video["width"])
        layout += [
            ("frame_indices", "I32", (frames,), int(video["frames"])),
            ("frames", "U8", (g, frames, h, w, 3), None),
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


def _shape_ok(shape: tuple[int, ...], expected: tuple[int, ...], bound: int | None) -> bool:
    if bound is not None:
        return len(shape) == 1 and 1 <= shape[0] <= bound
    return shape == expected


def _check_tensors(
    layout: list[TensorSpec], header: SafetensorsHeader, raw: Mapping[str, bytes]
) -> dict[str, npt.NDArray[Any]]:
    arrays: dict[str, npt.NDArray[Any]] = {}
    for name, dtype, shape, bound in layout:
        entry = header.tensors.get(name)
        if entry is None:
            raise rollout_invalid("missing-tensor", f"no tensor {name}", tensor=name)
        if entry.dtype != dtype:
            raise rollout_invalid(
                "tensor-dtype", f"{name} is {entry.dtype}, not {dtype}", tensor=name, dtype=entry.dtype
            )
        if not _shape_ok(entry.shape, shape, bound):
            expected = f"[1 .. {bound}]" if bound is not None else str(list(shape))
            raise rollout_invalid(
                "tensor-shape",
                f"{name} has shape {list(entry.shape)}, not {expected}",
                tensor=name,
                shape=list(entry.shape),
                expected=expected,
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


def _index_problem(values: npt.NDArray[Any], bound: int, ends_at_last: bool) -> str | None:
    for i, v in enumerate(values.tolist()):
        if not 0 <= v < bound:
            return f"[{i}] = {v} is outside [0, {bound})"
        if i > 0 and v <= values[i - 1]:
            return f"[{i}] = {v} does not increase"
    if ends_at_last and int(values[-1]) != bound - 1:
        return f"ends at {int(values[-1])}, not {bound - 1}"
    return None


def _check_indices(metadata: Mapping[str, Any], arrays: Mapping[str, npt.NDArray[Any]]) -> None:
    """v2's index values: latent_steps strictly increasing in [0, T] ending at T; frame_indices
    strictly increasing in [0, video.frames)."""
    if "latent_steps" in arrays:
        problem = _index_problem(arrays["latent_steps"], int(metadata["steps"]) + 1, True)
        if problem is not None:
            raise rollout_invalid("latent-steps", f"latent_steps{problem}", tensor="latent_steps")
    if "frame_indices" in arrays:
        problem = _index_problem(arrays["frame_indices"], int(metadata["video"]["frames"]), False)
        if problem is not None:
            raise rollout_invalid("frame-indices", f"frame_indices{problem}", tensor="frame_indices")


@dataclass(frozen=True)
class RolloutFile:
    """One rollout group's trajectory (RolloutFile v1 or v2); arrays are read-only and row-major.

    T = ``steps``, G = ``group``; one sample's latent has ``latent_dims``. A v2 file may keep only
    some steps' latents (``latent_steps``) and may hold decoded frames (``frames``).
    """

    #: The record (``__metadata__.rollout``): model, sampler, weightsVersions, …, added fields kept.
    metadata: dict[str, Any]
    #: float32 [K, G, *latent_dims]: x_t of each kept step t (``latent_steps``); v1 keeps all
    #: T + 1: x_0 (the initial noise) … x_T (the samples).
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
    #: int32 [K]: the step t of each row of ``latents``, increasing, ending at T (v1: 0 … T).
    latent_steps: npt.NDArray[np.int32]
    #: int32 [N]: which frames of the decoded clip ``frames`` holds; None when it has none.
    frame_indices: npt.NDArray[np.int32] | None = None
    #: uint8 [G, N, H, W, 3]: the returned frames of each sample as RGB; None when none.
    frames: npt.NDArray[np.uint8] | None = None

    @property
    def format_version(self) -> str:
        """``"2"`` when the record has v2's ``video`` key, else ``"1"``."""
        return format_version_of(self.metadata)

    @property
    def video(self) -> dict[str, int] | None:
        """The decoded clip's geometry ``{frames, height, width}``, or None without frames."""
        video = self.metadata.get("video") if self.format_version == "2" else None
        return None if video is None else {k: int(video[k]) for k in _VIDEO_KEYS}

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
        rows = np.flatnonzero(self.latent_steps == step)
        if rows.size == 0:
            raise FlowfleetError(
                "FMT_INVALID_ARGUMENT",
                f"step {step}'s latent is not kept (kept: {self.latent_steps.tolist()})",
                {"step": step, "kept": self.latent_steps.tolist()},
            )
        return cast(npt.NDArray[np.float32], self.latents[int(rows[0]), sample])

    def frames_of(self, sample: int) -> npt.NDArray[np.uint8]:
        """Sample ``sample``'s returned frames, uint8 [N, H, W, 3] (a view).

        :raises FlowfleetError: ``FMT_INVALID_ARGUMENT`` when the file has no frames or the index
            is outside it
        """
        if self.frames is None:
            raise FlowfleetError("FMT_INVALID_ARGUMENT", "the rollout returned no frames", {"sample": sample})
        _check_index(sample, self.group, "sample")
        return cast(npt.NDArray[np.uint8], self.frames[sample])

    def log_probs_of(self, sample: int) -> npt.NDArray[np.float64] | None:
        """Sample ``sample``'s per-step log-probs [T] (None for ``ode``).

        :raises FlowfleetError: ``FMT_INVALID_ARGUMENT`` for an index outside the file
        """
        _check_index(sample, self.group, "sample")
        return None if self.log_probs is None else self.log_probs[:, sample]

    def summary_fields(self) -> dict[str, Any]:
        """The record-derived part of the summary (§ 5 without id, worker, timings, captureStats)."""
        v2: dict[str, Any] = {}
        if self.format_version == "2":
            v2 = {
                "latentSteps": self.latent_steps.tolist(),
                "frameIndices": None if self.frame_indices is None else self.frame_indices.tolist(),
            }
        return {
            **v2,
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
            "latent_steps": self.latent_steps,
            "frame_indices": self.frame_indices,
            "frames": self.frames,
        }
        n = 0 if self.frame_indices is None else len(self.frame_indices)
        for name, dtype, shape, _ in tensor_layout(self.metadata, len(self.latent_steps), n):
            array = arrays[name]
            assert array is not None
            tensors[name] = {"dtype": dtype, "shape": list(shape), "values": array.reshape(-1).tolist()}
        return {"metadata": self.metadata, "tensors": tensors, "summary": self.summary_fields()}


def _check_index(value: int, size: int, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < size:
        raise FlowfleetError(
            "FMT_INVALID_ARGUMENT", f"{what} {value!r} is outside [0, {size})", {what: value, "size": size}
        )


def _length(header: SafetensorsHeader, name: str) -> int:
    entry = header.tensors.get(name)
    return entry.shape[0] if entry is not None and len(entry.shape) == 1 else 0


def read_rollout_file(data: bytes | bytearray | memoryview) -> RolloutFile:
    """Reads a RolloutFile v1 or v2, refusing what § 7 of its spec refuses, in its order.

    :raises FlowfleetError: ``FMT_SAFETENSORS_INVALID`` or ``FMT_ROLLOUT_INVALID`` with
        ``details["reason"]`` (the spec's reason id)
    """
    view = memoryview(data).cast("B")
    header = check_safetensors(view)
    _, metadata = _parse_metadata(header.metadata)
    layout = tensor_layout(metadata, _length(header, "latent_steps"), _length(header, "frame_indices"))
    expected = {spec[0] for spec in layout}
    unexpected = [name for name in header.tensors if name not in expected]
    if unexpected:
        raise rollout_invalid(
            "unexpected-tensor", f"unexpected tensors {', '.join(unexpected)}", tensors=unexpected
        )
    arrays = _check_tensors(layout, header, _decode(view, header))
    _check_indices(metadata, arrays)
    steps = int(metadata["steps"])
    return RolloutFile(
        metadata=metadata,
        latents=arrays["latents"],
        log_probs=arrays.get("log_probs"),
        seeds=arrays["seeds"],
        sigmas=arrays["sigmas"],
        timesteps=arrays["timesteps"],
        step_indices=arrays["step_indices"],
        latent_steps=arrays.get("latent_steps", np.arange(steps + 1, dtype=np.int32)),
        frame_indices=arrays.get("frame_indices"),
        frames=arrays.get("frames"),
    )
