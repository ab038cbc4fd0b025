"""What the trainer asks of the fleet: one iteration's rollouts (a group of seeds per prompt),
their result files, and the weight pushes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from flowfleet import Client, FlowfleetError, RolloutFile, read_rollout_file


@dataclass(frozen=True)
class Batch:
    """One iteration's rollouts as enqueued: the prompts, each group's seeds, the common fields,
    and the trainer's DiT version when they were enqueued."""

    iteration: int
    version: int
    prompts: list[str]
    seeds: list[list[int]]
    request: dict[str, Any]
    job_ids: list[str]


def seeds_of(base: int, iteration: int, prompt_index: int, prompts: int, group: int) -> list[int]:
    """Distinct seeds for every sample of the run: base + (iteration·P + p)·G + g."""
    first = base + (iteration * prompts + prompt_index) * group
    return list(range(first, first + group))


def enqueue_batch(
    fleet: Client,
    iteration: int,
    version: int,
    prompts: Sequence[str],
    group: int,
    seed: int,
    request: Mapping[str, Any],
    prompt_embeds: Mapping[str, Mapping[str, str]] | None = None,
) -> Batch:
    """Enqueues one rollout per prompt (its group of seeds) with the common ``request`` fields;
    ``prompt_embeds`` names each prompt's uploaded embedding (``promptEmbeds``: an embeddings
    card)."""
    seeds = [seeds_of(seed, iteration, p, len(prompts), group) for p in range(len(prompts))]
    groups: list[dict[str, Any]] = [
        {"prompt": prompt, "seeds": s} for prompt, s in zip(prompts, seeds, strict=True)
    ]
    if prompt_embeds is not None:
        for g in groups:
            g["promptEmbeds"] = dict(prompt_embeds[g["prompt"]])
    jobs = fleet.enqueue_round(groups, request)
    return Batch(iteration, version, list(prompts), seeds, dict(request), [job["id"] for job in jobs])


def collect(fleet: Client, batch: Batch, timeout_s: float, save_dir: Path | None) -> list[RolloutFile]:
    """Waits for every rollout of ``batch`` and reads its result file (kept in ``save_dir`` as
    ``iter-NNNN-pP.safetensors`` when given)."""
    rollouts = []
    for p, job in enumerate(batch.job_ids):
        fleet.wait_for(job, timeout_s=timeout_s, progress=False)
        data = fleet.get_result_bytes(job)
        if save_dir is not None:
            (save_dir / f"iter-{batch.iteration:04d}-p{p}.safetensors").write_bytes(data)
        rollouts.append(read_rollout_file(data))
    return rollouts


def push(
    fleet: Client,
    state: Mapping[str, torch.Tensor] | Path,
    component: str,
    timeout_s: float,
    *,
    lora_base: int | None = None,
) -> int:
    """Uploads ``state`` (a state_dict, sent F32: the trainer's exact weights; or a checkpoint
    directory, sent as it is; with ``lora_base`` a LoRA adapter directory, merged by the fleet into
    that version), syncs it as the next version and waits for every live worker's ack (a live
    worker's refusal raises ``CLIENT_SYNC_FAILED`` at once); answers the version. The on-policy
    fence: the version is then the fleet's ``current`` — the newest a live worker serves, what the
    coordinator judges ``exact`` and ``maxStaleness`` against — and a batch is enqueued on it only
    then."""
    if isinstance(state, Path):
        lora = None if lora_base is None else {"base": lora_base}
        version = fleet.push_weights(state, component=component, lora=lora, timeout_s=timeout_s).version
    else:
        version = fleet.push_weights(
            dict(state), component=component, dtype="F32", timeout_s=timeout_s
        ).version
    current = fleet.weights(component, limit=1)["current"]
    if current != version:
        raise FlowfleetError(
            "CLIENT_SYNC_FAILED",
            f"{component} v{version} was acked, yet the fleet serves v{current}",
            {"component": component, "version": version, "current": current},
        )
    return version
