"""Checkpoints from disk through the fleet: a sharded directory (an index and two BF16 shards
under diffusers pipelines' ``transformer.`` prefix) runs bit for bit like the same values pushed
as one F32 state_dict; a PEFT adapter directory is a LoRA sync on a base, its binding reported per
worker, and it runs bit for bit like a full push of the same merge computed in PyTorch by the
documented rule (a plain float32 ``W + s * (B @ A)`` does not); an adapter that binds too few
layers and a directory that is no checkpoint are refused before anything changes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load, save_file

from fleet_support import REPO, SMALL, Fleet
from flowfleet import Client, FlowfleetError, open_checkpoint

ADAPTER = REPO / "test" / "fixtures" / "peft-wan21-mini"


def rollout_on(client: Client, version: int) -> np.ndarray:
    job = client.enqueue_rollouts(
        {**SMALL, "prompt": "a kite", "seeds": [5, 6], "weights": {"dit": {"exact": version}}}
    )
    client.wait_for(job["id"], timeout_s=120)
    rollout = client.get_result(job["id"])
    assert rollout.log_probs is not None
    return np.concatenate(
        [rollout.latents.ravel().view(np.uint32), rollout.log_probs.ravel().view(np.uint32)]
    )


def sharded_dir(root: Path, tensors: dict[str, torch.Tensor]) -> Path:
    names = sorted(tensors)
    weight_map: dict[str, str] = {}
    for i in (1, 2):
        file = f"model-0000{i}-of-00002.safetensors"
        part = {f"transformer.{n}": tensors[n] for n in names[i - 1 :: 2]}
        save_file(part, str(root / file))
        weight_map.update(dict.fromkeys(part, file))
    (root / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    return root


def test_a_sharded_directory_runs_like_its_state_dict(
    trainer: Client, fleet: Fleet, initial_dit_weights: bytes, tmp_path: Path
) -> None:
    bf16 = {name: (t * 1.5).to(torch.bfloat16) for name, t in load(initial_dit_weights).items()}
    directory = sharded_dir(tmp_path, bf16)
    assert len(open_checkpoint(directory).shards) == 2
    sharded = trainer.push_weights(directory)
    assert len(sharded.blobs) == 2 and sorted(sharded.progress.ok_workers) == sorted(fleet.workers)
    assert trainer.weights("dit")["versions"][str(sharded.version)].get("shards") == 2
    on_sharded = rollout_on(trainer, sharded.version)  # before a newer version supersedes it
    widened = trainer.push_weights({n: t.to(torch.float32) for n, t in bf16.items()}, dtype="F32")
    assert np.array_equal(on_sharded, rollout_on(trainer, widened.version))


def test_a_peft_adapter_directory_is_a_lora_sync(trainer: Client, fleet: Fleet) -> None:
    base = trainer.weights("dit")["current"]
    assert base is not None
    pushed = trainer.push_weights(ADAPTER, lora={"base": base, "expectLayers": 16})
    version = trainer.weights("dit")["versions"][str(pushed.version)]
    assert version.get("kind") == "lora" and version.get("base") == base
    assert version.get("boundLayers") == dict.fromkeys(fleet.workers, 16)
    with pytest.raises(FlowfleetError) as unbound:
        trainer.push_weights(ADAPTER, lora={"base": base, "expectLayers": 240})
    assert unbound.value.code == "MODEL_LORA_UNBOUND"
    assert unbound.value.details["boundLayers"] == 16
    assert trainer.weights("dit")["current"] == pushed.version


def test_a_directory_that_is_no_checkpoint_is_refused_before_any_upload(
    trainer: Client, tmp_path: Path
) -> None:
    for name in ("a.safetensors", "b.safetensors"):
        save_file({"x": torch.zeros(1)}, str(tmp_path / name))
    current = trainer.weights("dit")["current"]
    with pytest.raises(FlowfleetError) as refused:
        trainer.push_weights(tmp_path)
    assert refused.value.code == "FMT_CHECKPOINT_INVALID" and refused.value.reason == "several-files"
    assert trainer.weights("dit")["current"] == current


def torch_merge(base: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The fleet's merge rule in PyTorch: float64 sum over k in order, two float32 roundings."""
    adapter = load((ADAPTER / "adapter_model.safetensors").read_bytes())
    config = json.loads((ADAPTER / "adapter_config.json").read_text())
    rank = config["r"]
    scale = config["lora_alpha"] / (math.sqrt(rank) if config["use_rslora"] else rank)
    merged = dict(base)
    for key in adapter:
        if not key.endswith(".lora_A.weight"):
            continue
        module = key.removeprefix("base_model.model.").removesuffix(".lora_A.weight")
        a = adapter[key].double()
        b = adapter[key.replace("lora_A", "lora_B")].double()
        weight = base[f"{module}.weight"]
        acc = torch.zeros(weight.shape, dtype=torch.float64)
        for k in range(rank):
            acc += torch.outer(b[:, k], a[k])
        merged[f"{module}.weight"] = (weight.double() + (scale * acc).float().double()).float()
    return merged


def test_a_lora_sync_runs_like_the_trainers_torch_merge(trainer: Client, initial_dit_weights: bytes) -> None:
    base = {name: t * 0.75 for name, t in load(initial_dit_weights).items()}
    on_base = trainer.push_weights(base, dtype="F32")
    adapted = trainer.push_weights(ADAPTER, lora={"base": on_base.version})
    with_adapter = rollout_on(trainer, adapted.version)
    merged = trainer.push_weights(torch_merge(base), dtype="F32")
    assert np.array_equal(with_adapter, rollout_on(trainer, merged.version))


def test_a_file_goes_up_in_pieces_and_reads_back_whole(trainer: Client, tmp_path: Path) -> None:
    # 3 MiB and a bit: more than one piece of the transport's 1 MiB (BODY_CHUNK_BYTES), and a
    # last piece that is not full.
    values = torch.arange(786_435, dtype=torch.float32)
    path = tmp_path / "big.safetensors"
    save_file({"w": values}, str(path))
    data = path.read_bytes()
    stored = trainer.upload_blob_file(path)
    assert stored["sizeBytes"] == len(data)
    assert trainer.download_blob(stored["sha256"]) == data
    # The same bytes from memory go up in pieces too, to the same blob.
    assert trainer.upload_blob(data)["sha256"] == stored["sha256"]


def test_a_file_whose_header_is_broken_is_refused_before_any_upload(trainer: Client, tmp_path: Path) -> None:
    path = tmp_path / "broken.safetensors"
    path.write_bytes((16).to_bytes(8, "little") + b'{"w": nonsense }' + bytes(64))
    with pytest.raises(FlowfleetError) as refused:
        trainer.upload_blob_file(path)
    assert refused.value.code == "FMT_SAFETENSORS_INVALID"
    with pytest.raises(FlowfleetError) as missing:
        trainer.upload_blob_file(tmp_path / "absent.safetensors")
    assert missing.value.code == "FMT_FILE_IO"
