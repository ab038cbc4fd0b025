"""A torch state_dict round trip through the fleet: upload, sync, every live worker's ack, and
rollouts that ran on exactly that version — and that the weights are the ones sent (the same
weights give the same trajectory bit for bit, changed weights another)."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch
from safetensors.torch import load

from fleet_support import SMALL, Fleet
from flowfleet import Client, FlowfleetError, RolloutFile

SEEDS = [11, 12]


def rollout_on(client: Client, version: int) -> RolloutFile:
    job = client.enqueue_rollouts(
        {**SMALL, "prompt": "a heron over a lake", "seeds": SEEDS, "weights": {"dit": {"exact": version}}}
    )
    client.wait_for(job["id"], timeout_s=120)
    rollout = client.get_result(job["id"])
    assert rollout.metadata["weightsVersions"]["dit"] == version
    return rollout


def test_a_state_dict_is_pushed_acked_by_every_live_worker_and_used(
    trainer: Client, fleet: Fleet, initial_dit_weights: bytes
) -> None:
    initial = load(initial_dit_weights)
    # As a trainer holds them: parameters that require grad.
    params = {name: torch.nn.Parameter(tensor.clone()) for name, tensor in initial.items()}

    first = trainer.push_weights(params, dtype="F32")
    assert sorted(first.progress.ok_workers) == sorted(fleet.workers)
    assert first.progress.acks == dict.fromkeys(fleet.workers, "ok")
    assert trainer.weights("dit")["versions"][str(first.version)]["status"] == "loaded"
    baseline = rollout_on(trainer, first.version)

    generator = torch.Generator().manual_seed(3)
    with torch.no_grad():
        changed = {name: p + 0.05 * torch.randn(p.shape, generator=generator) for name, p in params.items()}
    second = trainer.push_weights(changed, dtype="BF16")
    assert second.version == first.version + 1
    assert sorted(second.progress.ok_workers) == sorted(fleet.workers)
    moved = rollout_on(trainer, second.version)
    assert np.array_equal(moved.latents[0], baseline.latents[0])  # x_0 is the seeds' noise
    assert not np.array_equal(moved.final_latents, baseline.final_latents)

    third = trainer.push_weights(params, dtype="F32", version=second.version + 1)
    assert third.sha256 == first.sha256  # the same state_dict is the same blob
    again = rollout_on(trainer, third.version)
    assert np.array_equal(again.latents, baseline.latents)
    assert again.log_probs is not None and baseline.log_probs is not None
    assert np.array_equal(again.log_probs, baseline.log_probs)

    half = trainer.push_weights(params, dtype="F16", min_workers=1)
    assert len(half.progress.ok_workers) >= 1
    rollout_on(trainer, half.version)


def test_weights_no_worker_can_load_are_client_sync_failed(
    trainer: Client, initial_dit_weights: bytes
) -> None:
    initial = load(initial_dit_weights)
    missing_one = dict(list(initial.items())[1:])
    with pytest.raises(FlowfleetError) as failed:
        trainer.push_weights(missing_one, timeout_s=60)
    assert failed.value.code == "CLIENT_SYNC_FAILED"
    details = failed.value.details
    # The first live refusal ends the wait, so the others may not have answered yet.
    assert details["status"] in ("pending", "failed") and details["okWorkers"] == []
    assert details["reasons"] and set(details["reasons"]) <= set(details["liveWorkers"])
    # Once every live worker answered, every one refused: the version is failed.
    version = str(trainer.weights("dit")["latest"]["version"])
    deadline = time.monotonic() + 30
    report = trainer.weights("dit")
    while report["versions"][version]["status"] != "failed" and time.monotonic() < deadline:
        time.sleep(0.1)
        report = trainer.weights("dit")
    assert report["versions"][version]["status"] == "failed"
    assert set(report["versions"][version]["codes"]) >= set(details["liveWorkers"])


def test_a_version_every_worker_refuses_never_becomes_current(
    trainer: Client, initial_dit_weights: bytes
) -> None:
    initial = load(initial_dit_weights)
    good = trainer.push_weights(initial, dtype="F32")
    name = next(iter(initial))
    nan = initial[name].clone()
    nan.view(-1)[0] = float("nan")
    started = time.monotonic()
    with pytest.raises(FlowfleetError) as refused:
        trainer.push_weights({**initial, name: nan}, dtype="F32", timeout_s=60)
    assert refused.value.code == "CLIENT_SYNC_FAILED"
    assert time.monotonic() - started < 30  # the refusals end the wait, not its timeout
    bad = good.version + 1
    # The first refusal ended the wait; once every live worker answered, the version is failed.
    deadline = time.monotonic() + 30
    report = trainer.weights("dit")
    while report["latest"] != {"version": bad, "status": "failed"} and time.monotonic() < deadline:
        time.sleep(0.1)
        report = trainer.weights("dit")
    assert report["latest"] == {"version": bad, "status": "failed"}
    assert report["current"] == good.version
    assert set(report["versions"][str(bad)]["codes"].values()) == {"WORKER_WEIGHTS_NOT_FINITE"}
    # The edge refuses what no live worker can serve, instead of a job that fails later.
    request = {**SMALL, "prompt": "a heron over a lake", "seeds": SEEDS}
    with pytest.raises(FlowfleetError) as unavailable:
        trainer.enqueue_rollouts({**request, "weights": {"dit": {"exact": bad}}})
    assert unavailable.value.code == "API_WEIGHT_VERSION_UNAVAILABLE"
    # On-policy means what the fleet serves: the good version.
    job = trainer.enqueue_rollouts({**request, "weights": {"dit": {"maxStaleness": 0}}})
    trainer.wait_for(job["id"], timeout_s=120)
    assert trainer.get_result(job["id"]).metadata["weightsVersions"]["dit"] == good.version
    # The next push takes the number after the refused one.
    assert trainer.push_weights(initial, dtype="F32").version == bad + 1
