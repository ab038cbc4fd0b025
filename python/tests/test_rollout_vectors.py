"""RolloutFile v1's and v2's test vectors (docs/formats/vectors/rollout-file-v1/, -v2/): every
valid file reads into its canonical JSON (§ 6 equality: bits and the sign of zero count), every
invalid one is refused with the manifest's code and reason."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import numpy as np
import pytest

from fleet_support import VECTORS, VECTORS_V2
from flowfleet import FlowfleetError, read_rollout_file

MANIFEST = json.loads((VECTORS / "manifest.json").read_text())
MANIFEST_V2 = json.loads((VECTORS_V2 / "manifest.json").read_text())
#: Every vector of both versions with the directory it lives in (a v2 reader reads v1 files).
VALID = [(VECTORS, e) for e in MANIFEST["valid"]] + [(VECTORS_V2, e) for e in MANIFEST_V2["valid"]]
INVALID = [(VECTORS, e) for e in MANIFEST["invalid"]] + [(VECTORS_V2, e) for e in MANIFEST_V2["invalid"]]


def _id(item: tuple[Any, dict[str, Any]]) -> str:
    return f"{item[0].name[-2:]}-{item[1]['name']}"


def same(a: Any, b: Any, path: str = "") -> list[str]:
    """Differences between two canonical JSON values under § 6's equality."""
    if isinstance(a, bool) or isinstance(b, bool):
        return [] if a is b else [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        x, y = float(a), float(b)
        ok = x == y and math.copysign(1.0, x) == math.copysign(1.0, y)
        return [] if ok else [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys {sorted(a)} != {sorted(b)}"]
        return [d for k in a for d in same(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: length {len(a)} != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in same(x, y, f"{path}[{i}]")]
    return [] if a == b and type(a) is type(b) else [f"{path}: {a!r} != {b!r}"]


def test_the_manifest_lists_every_vector_file() -> None:
    for vectors, manifest, invalid in ((VECTORS, MANIFEST, 28), (VECTORS_V2, MANIFEST_V2, 20)):
        listed = {e["file"] for e in manifest["valid"] + manifest["invalid"]}
        on_disk = {str(p.relative_to(vectors)) for p in vectors.rglob("*.safetensors")}
        assert listed == on_disk
        assert len(manifest["valid"]) >= 5 and len(manifest["invalid"]) >= invalid


@pytest.mark.parametrize("item", VALID, ids=_id)
def test_a_valid_vector_reads_into_its_canonical_json(item: tuple[Any, dict[str, Any]]) -> None:
    vectors, entry = item
    data = (vectors / entry["file"]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == entry["sha256"]
    expected = json.loads((vectors / entry["expected"]).read_text())
    rollout = read_rollout_file(data)
    assert same(rollout.to_json(), expected) == []
    # The arrays are numpy arrays of the spec's dtypes and shapes.
    t, g = rollout.steps, rollout.group
    k = len(rollout.latent_steps)
    assert rollout.latents.dtype == np.float32 and rollout.latent_steps.dtype == np.int32
    assert rollout.latents.shape == (k, g, *rollout.latent_dims) and rollout.latent_steps[-1] == t
    assert k == t + 1 or rollout.format_version == "2"
    assert rollout.final_latents.tolist() == rollout.latents[k - 1].tolist()
    video = rollout.video
    if video is None:
        assert rollout.frames is None and rollout.frame_indices is None
    else:
        assert rollout.frames is not None and rollout.frame_indices is not None
        n = len(rollout.frame_indices)
        assert rollout.frames.dtype == np.uint8
        assert rollout.frames.shape == (g, n, video["height"], video["width"], 3)
        assert rollout.frames_of(g - 1).tolist() == rollout.frames[g - 1].tolist()
    assert rollout.final_latents.shape == (g, *rollout.latent_dims)
    assert rollout.seeds.dtype == np.int64 and rollout.seeds.shape == (g,)
    assert rollout.sigmas.dtype == np.float64 and rollout.sigmas.shape == (t + 1,)
    assert rollout.timesteps.shape == (t,) and rollout.step_indices.dtype == np.int32
    if rollout.metadata["sampler"] == "sde":
        assert rollout.log_probs is not None and rollout.log_probs.shape == (t, g)
        lp = rollout.log_probs_of(g - 1)
        assert lp is not None and lp.tolist() == rollout.log_probs[:, g - 1].tolist()
    else:
        assert rollout.log_probs is None and rollout.log_probs_of(0) is None


def test_the_extreme_latents_survive_bit_for_bit() -> None:
    rollout = read_rollout_file((VECTORS / "valid" / "group-1.safetensors").read_bytes())
    first = rollout.latents.reshape(-1)[:3]
    assert math.copysign(1.0, float(first[0])) == -1.0 and float(first[0]) == 0.0
    assert float(first[1]) == 2.0**-149  # the smallest binary32 subnormal
    assert float(first[2]) == float(np.finfo(np.float32).max)


def test_added_record_fields_are_kept() -> None:
    rollout = read_rollout_file((VECTORS / "valid" / "extra-metadata.safetensors").read_bytes())
    expected = json.loads((VECTORS / "valid" / "extra-metadata.json").read_text())["metadata"]
    added = set(expected) - {
        "model", "loopId", "prompt", "negativePrompt", "sampler", "steps", "group", "latentDims",
        "noiseLevel", "guidanceScale", "shift", "weightsVersions", "backend", "platform",
        "interceptors",
    }  # fmt: skip
    assert added and all(rollout.metadata[k] == expected[k] for k in added)
    assert rollout.metadata["shift"] is None


@pytest.mark.parametrize("item", INVALID, ids=_id)
def test_an_invalid_vector_is_refused_with_its_code_and_reason(item: tuple[Any, dict[str, Any]]) -> None:
    vectors, entry = item
    data = (vectors / entry["file"]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == entry["sha256"]
    with pytest.raises(FlowfleetError) as refused:
        read_rollout_file(data)
    assert (refused.value.code, refused.value.reason) == (entry["code"], entry["reason"]), refused.value


def test_an_index_outside_the_file_is_fmt_invalid_argument() -> None:
    rollout = read_rollout_file((VECTORS / "valid" / "sde-cfg.safetensors").read_bytes())
    for bad in (
        lambda: rollout.latent(rollout.steps + 1, 0),
        lambda: rollout.latent(0, -1),
        lambda: rollout.log_probs_of(2),
    ):
        with pytest.raises(FlowfleetError) as refused:
            bad()
        assert refused.value.code == "FMT_INVALID_ARGUMENT"
    assert rollout.latent(rollout.steps, 1).tolist() == rollout.final_latents[1].tolist()


def test_a_file_read_as_the_spec_allows_not_as_the_safetensors_package_writes_it() -> None:
    """§ 2.1: ``2.0`` is the integer 2, and the header needs no padding; the safetensors package's
    own parser refuses the first, so the reader must not hand it the header as it is."""
    original = (VECTORS / "valid" / "group-1.safetensors").read_bytes()
    n = int.from_bytes(original[:8], "little")
    header = json.loads(original[8 : 8 + n])
    header["seeds"]["shape"] = [1.0]
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    rebuilt = len(text).to_bytes(8, "little") + text + original[8 + n :]
    assert read_rollout_file(rebuilt).seeds.tolist() == [0]


def test_a_v2_window_keeps_only_its_steps_and_the_frames_are_per_sample() -> None:
    rollout = read_rollout_file((VECTORS_V2 / "valid" / "frames-every-2-window.safetensors").read_bytes())
    assert rollout.format_version == "2" and rollout.latent_steps.tolist() == [1, 2, 4]
    assert rollout.latent(2, 1).tolist() == rollout.latents[1, 1].tolist()
    with pytest.raises(FlowfleetError) as refused:
        rollout.latent(0, 0)  # x_0 was not kept
    assert refused.value.code == "FMT_INVALID_ARGUMENT"
    assert rollout.frame_indices is not None and rollout.frame_indices.tolist() == [0, 2, 4]
    assert rollout.frames_of(0).shape == (3, 2, 2, 3)
    v1 = read_rollout_file((VECTORS / "valid" / "sde-cfg.safetensors").read_bytes())
    assert v1.format_version == "1" and v1.latent_steps.tolist() == list(range(v1.steps + 1))
    with pytest.raises(FlowfleetError):
        v1.frames_of(0)
