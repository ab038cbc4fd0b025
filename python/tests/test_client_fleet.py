"""Every route of the client against a real local fleet (redis-server, the coordinator and two
workers, started by the ``fleet`` fixture), and the server's error codes on bad input."""

from __future__ import annotations

import hashlib
import json
import time
import uuid

import numpy as np
import pytest

from fleet_support import SMALL, Fleet
from flowfleet import Client, FlowfleetError, SyncProgress


def request(prompt: str, seeds: list[int], **more: object) -> dict[str, object]:
    return {**SMALL, "prompt": prompt, "seeds": seeds, **more}


def test_health_fleet_matrix_lanes_metrics_openapi(fleet: Fleet) -> None:
    with fleet.client("viewer") as viewer:
        assert viewer.health() == {"status": "ok", "redis": "up"}
        listed = viewer.fleet()
        assert listed["live"] == 2 and sorted(w["workerId"] for w in listed["workers"]) == sorted(
            fleet.workers
        )
        assert all(w["alive"] and "wan21-mini" in w["models"] for w in listed["workers"])
        matrix = viewer.matrix()
        assert matrix["liveWorkers"] == 2 and matrix["cells"]
        assert isinstance(viewer.lanes()["lanes"], list)
        scaling = viewer.scaling()
        assert scaling["rule"].startswith("desiredReplicas = ")
        assert sum(c["workers"] for c in scaling["classes"]) == 2
        assert all(c["source"] == "live" and c["capacity"] >= c["workers"] for c in scaling["classes"])
        one = scaling["classes"][0]["deviceClass"]
        assert [c["deviceClass"] for c in viewer.scaling(one)["classes"]] == [one]
        with pytest.raises(FlowfleetError) as unknown:
            viewer.scaling("cuda/sm1000")
        assert unknown.value.code == "API_DEVICE_CLASS_NOT_FOUND"
        assert "flowfleet_scaling_workers" in viewer.metrics()
        assert "flowfleet_workers" in viewer.metrics()
        document = viewer.openapi()
        assert document["openapi"].startswith("3.1") and "/v1/rollouts" in document["paths"]


def test_enqueue_wait_and_read_a_result_as_numpy(trainer: Client, capsys: pytest.CaptureFixture[str]) -> None:
    enqueued = trainer.enqueue_rollouts(request("a red fox in the snow", [3, 5], guidanceScale=4.5))
    assert enqueued["status"] == "queued" and enqueued["eligibleWorkers"] == 2
    (lane,) = [entry for entry in trainer.lanes()["lanes"] if entry["lane"] == enqueued["lane"]]
    assert lane["eligibleWorkers"] == 2 and lane["capacity"] >= 2
    eligible = trainer.lane_workers(enqueued["lane"])
    assert eligible["live"] == 2 and sorted(w["workerId"] for w in eligible["workers"]) == ["w1", "w2"]
    with pytest.raises(FlowfleetError) as unknown_lane:
        trainer.lane_workers("lane-00000000000000ff")
    assert unknown_lane.value.code == "API_LANE_NOT_FOUND"
    seen: list[str] = []
    status = trainer.wait_for(
        enqueued["id"], on_progress=lambda s: seen.append(s["status"]), progress=True, timeout_s=120
    )
    assert status["status"] == "completed" and seen[-1] == "completed"
    assert status["progress"] == {"step": 2, "steps": 2} and status["worker"] in ("w1", "w2")
    assert f"rollout {enqueued['id'][-8:]}" in capsys.readouterr().err  # the tqdm bar
    rollout = trainer.get_result(enqueued["id"])
    summary = status["summary"]
    assert rollout.steps == 2 and rollout.group == 2 and rollout.seeds.tolist() == [3, 5]
    assert rollout.latents.shape == (3, 2, *rollout.latent_dims) and rollout.latents.dtype == np.float32
    assert rollout.log_probs is not None and rollout.log_probs.tolist() == summary["logProbs"]
    assert rollout.sigmas.tolist() == summary["sigmas"]
    assert rollout.summary_fields() == {k: summary[k] for k in rollout.summary_fields()}
    assert rollout.metadata["prompt"] == "a red fox in the snow" and rollout.metadata["guidanceScale"] == 4.5
    assert np.isfinite(rollout.final_latents).all()
    raw = trainer.get_result_bytes(enqueued["id"])
    assert raw[8:9] == b"{" and trainer.status(enqueued["id"])["status"] == "completed"


def test_an_idempotency_key_names_one_enqueue(trainer: Client) -> None:
    key = str(uuid.uuid4())
    first = trainer.enqueue_rollouts(request("once", [1]), idempotency_key=key)
    again = trainer.enqueue_rollouts(request("once", [1]), idempotency_key=key)
    assert again["id"] == first["id"]
    with pytest.raises(FlowfleetError) as conflict:
        trainer.enqueue_rollouts(request("another body", [1]), idempotency_key=key)
    assert conflict.value.code == "API_IDEMPOTENCY_CONFLICT"
    trainer.wait_for(first["id"], timeout_s=120)


def test_a_round_enqueues_each_group_in_order(trainer: Client) -> None:
    prompts = ["a cat", "a dog", "a fox", "an owl", "a hare"]
    jobs = trainer.enqueue_round([{"prompt": p, "seeds": [i, i + 10]} for i, p in enumerate(prompts)], SMALL)
    assert len(jobs) == 5 and len({j["id"] for j in jobs}) == 5
    for prompt, job in zip(prompts, jobs, strict=True):
        assert trainer.wait_for(job["id"], timeout_s=120)["summary"]["prompt"] == prompt


def test_a_round_that_fails_midway_names_what_was_enqueued(trainer: Client) -> None:
    groups = [{"prompt": "fine", "seeds": [1]}] + [{"prompt": "", "seeds": [1]}] * 8
    with pytest.raises(FlowfleetError) as failed:
        trainer.enqueue_round(groups, SMALL)
    assert failed.value.code == "PROTO_INVALID_REQUEST"
    # The first group is in flight when the others fail: it is the one enqueued.
    (enqueued,) = failed.value.details["enqueued"]
    assert enqueued["status"] == "queued"
    assert isinstance(failed.value.__cause__, FlowfleetError)
    assert trainer.wait_for(enqueued["id"], timeout_s=120)["summary"]["prompt"] == "fine"


def test_blobs_upload_download_and_not_found(trainer: Client, fleet: Fleet) -> None:
    data = b"flowfleet python sdk blob " + uuid.uuid4().bytes
    stored = trainer.upload_blob(data)
    assert stored == {"sha256": hashlib.sha256(data).hexdigest(), "sizeBytes": len(data)}
    assert trainer.download_blob(stored["sha256"]) == data
    with fleet.client("worker") as worker:
        assert worker.get_blob_bytes(stored["sha256"]) == data
    with pytest.raises(FlowfleetError) as missing:
        trainer.download_blob("0" * 64)
    assert missing.value.code == "API_BLOB_NOT_FOUND"


def test_a_result_upload_comes_only_from_the_attempt_holding_the_job(trainer: Client, fleet: Fleet) -> None:
    job = trainer.enqueue_rollouts(request("upload twice", [7]))
    status = trainer.wait_for(job["id"], timeout_s=120)
    result = trainer.get_result_bytes(job["id"])
    summary = json.dumps(status["summary"]).encode()
    with fleet.client("worker") as worker:
        # Finished: no attempt holds it, so no token stores anything under it.
        with pytest.raises(FlowfleetError) as refused:
            worker.upload_results(job["id"], summary, result[:-8] + b"\x00" * 8, lock_token="w1:not-the-lock")
        assert refused.value.code == "API_RESULT_NOT_HOLDER"
    assert trainer.get_result_bytes(job["id"]) == result


def test_cancel_a_queued_rollout_and_not_a_finished_one(trainer: Client) -> None:
    # No worker serves cuda: the job stays queued.
    queued = trainer.enqueue_rollouts(
        request("never runs", [1], constraints={"devices": ["cuda"]}, waitForCapacity=True)
    )
    assert trainer.cancel_rollout(queued["id"]) == {
        "id": queued["id"],
        "lane": queued["lane"],
        "status": "cancelled",
    }
    with pytest.raises(FlowfleetError) as gone:
        trainer.status(queued["id"])
    assert gone.value.code == "API_JOB_NOT_FOUND"
    done = trainer.enqueue_rollouts(request("runs", [2]))
    trainer.wait_for(done["id"], timeout_s=120)
    with pytest.raises(FlowfleetError) as finished:
        trainer.cancel_rollout(done["id"])
    assert (
        finished.value.code == "API_JOB_NOT_CANCELLABLE" and finished.value.details["status"] == "completed"
    )


def test_weight_reports_and_sync_refusals(trainer: Client) -> None:
    report = trainer.weights("text_encoder", limit=5)
    assert report["component"] == "text_encoder"
    with pytest.raises(FlowfleetError) as never:
        trainer.wait_for_sync("text_encoder", 999_999, timeout_s=5)
    assert never.value.code == "CLIENT_UNKNOWN_VERSION"
    with pytest.raises(FlowfleetError) as no_blob:
        trainer.sync_weights("text_encoder", 999_999, "0" * 64)
    assert no_blob.value.code == "API_BLOB_NOT_FOUND"
    with pytest.raises(FlowfleetError) as bad_limit:
        trainer.weights("dit", limit=0)
    assert bad_limit.value.code == "CLIENT_INVALID_OPTIONS"


def test_a_weight_version_never_synced_is_refused_at_enqueue(trainer: Client) -> None:
    with pytest.raises(FlowfleetError) as refused:
        trainer.enqueue_rollouts(request("too new", [1], weights={"dit": {"exact": 999_999}}))
    assert refused.value.code == "API_WEIGHT_VERSION_UNAVAILABLE"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (request("", [1]), "PROTO_INVALID_REQUEST"),
        (request("p", [1, 1]), "PROTO_INVALID_REQUEST"),
        (request("p", [1], steps=0), "PROTO_INVALID_REQUEST"),
        ({**request("p", [1]), "model": "no-such-model"}, "MODEL_UNKNOWN_CARD"),
        (request("p", [1], shape={"frames": 1, "height": 7, "width": 8}), "MODEL_INVALID_REQUEST"),
    ],
)
def test_bad_rollout_requests_carry_the_servers_code(
    trainer: Client, body: dict[str, object], code: str
) -> None:
    with pytest.raises(FlowfleetError) as refused:
        trainer.enqueue_rollouts(body)
    assert refused.value.code == code, refused.value


def test_roles_and_unknown_ids(fleet: Fleet) -> None:
    with Client(fleet.url, "not-a-valid-token-at-all") as stranger, pytest.raises(FlowfleetError) as who:
        stranger.fleet()
    assert who.value.code == "API_UNAUTHORIZED"
    with fleet.client("viewer") as viewer:
        with pytest.raises(FlowfleetError) as forbidden:
            viewer.enqueue_rollouts(request("p", [1]))
        assert forbidden.value.code == "API_FORBIDDEN"
        with pytest.raises(FlowfleetError) as unknown:
            viewer.status("lane-0123456789abcdef.6f1c2a4e-8d0b-4c1a-9e57-3b2d4f6a8c10")
        assert unknown.value.code == "API_JOB_NOT_FOUND"
        with pytest.raises(FlowfleetError) as malformed:
            viewer.status("not-a-job-id")
        assert malformed.value.code == "API_JOB_NOT_FOUND"  # its lane is not recorded
    with pytest.raises(FlowfleetError) as empty:
        Client(fleet.url).status("")
    assert empty.value.code == "CLIENT_INVALID_OPTIONS"


def test_wait_for_sync_counts_every_live_worker(trainer: Client, initial_dit_weights: bytes) -> None:
    progress_seen: list[SyncProgress] = []
    pushed = trainer.push_weights(initial_dit_weights, component="dit", on_update=progress_seen.append)
    assert (
        sorted(pushed.progress.ok_workers) == sorted(pushed.progress.live_workers)
        and len(pushed.progress.live_workers) == 2
    )
    assert pushed.progress.status == "loaded" and progress_seen[-1] == pushed.progress
    with pytest.raises(FlowfleetError) as stale:
        trainer.sync_weights("dit", pushed.version, pushed.sha256)
    assert stale.value.code == "API_STALE_VERSION"


def test_status_long_polls_until_the_job_changes(trainer: Client) -> None:
    # A lane no live worker serves (cuda only): the job stays queued.
    held = trainer.enqueue_rollouts(
        request("a held job", [1], waitForCapacity=True, constraints={"devices": ["cuda"]})
    )
    seen = trainer.status(held["id"])
    started = time.monotonic()
    unchanged = trainer.status(held["id"], wait_s=0.6, seen=seen)
    assert time.monotonic() - started >= 0.55 and unchanged["status"] == "queued"
    # wait_for's requests each wait on the coordinator: a 1.5 s wait takes a handful, not dozens.
    calls: list[float] = []
    original = trainer.status

    def counted(id: str, **kw: object) -> object:
        calls.append(time.monotonic())
        return original(id, **kw)  # type: ignore[arg-type]

    trainer.status = counted  # type: ignore[method-assign,assignment]
    with pytest.raises(FlowfleetError) as timed_out:
        trainer.wait_for(held["id"], timeout_s=1.5, long_poll_s=0.5, poll_s=0.01, max_poll_s=0.01)
    assert timed_out.value.code == "CLIENT_TIMEOUT"
    assert 2 <= len(calls) <= 6
