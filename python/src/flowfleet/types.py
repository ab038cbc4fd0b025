"""Typed views of the coordinator's JSON answers (protocol's schemas; apps/coordinator/README.md).

They are plain dicts at run time: the client checks the fields named here (``_schema.py``) and
keeps any other key a newer coordinator adds.
"""

from __future__ import annotations

import sys
from typing import Any, Literal, TypedDict

if sys.version_info >= (3, 11):
    from typing import NotRequired
# Before 3.11 the name is only ever read inside (postponed, never evaluated) annotations.

JobState = Literal["queued", "active", "completed", "failed"]
SyncStatus = Literal["ok", "refused", "failed"]
#: Where a synced version stands across the live fleet: ``loaded`` (a live worker holds it),
#: ``retired`` (loaded once, held by no live worker now), ``failed``, ``superseded``, ``pending``.
VersionStatus = Literal["pending", "loaded", "retired", "failed", "superseded"]


class ErrorEnvelope(TypedDict):
    code: str
    message: str
    #: Always present (``{}`` when the error has none).
    details: Any


class EnqueuedRollout(TypedDict):
    id: str
    lane: str
    status: Literal["queued"]
    eligibleWorkers: int


class CancelledRollout(TypedDict):
    id: str
    lane: str
    status: Literal["cancelled"]


class JobProgress(TypedDict):
    step: int
    steps: int


class JobStatus(TypedDict):
    id: str
    lane: str
    status: JobState
    progress: JobProgress
    attempts: int
    createdAt: str
    error: NotRequired[ErrorEnvelope]
    worker: NotRequired[str]
    startedAt: NotRequired[str]
    finishedAt: NotRequired[str]
    #: RolloutFile v1 § 5 (present once completed).
    summary: NotRequired[dict[str, Any]]


class StoredBlob(TypedDict):
    sha256: str
    sizeBytes: int


class ResultUpload(TypedDict):
    id: str
    sha256: str
    sizeBytes: int
    status: Literal["created", "unchanged"]
    summary: Literal["created", "kept"]


class SyncAccepted(TypedDict):
    component: str
    version: int
    sha256: str
    sizeBytes: int
    previous: int | None


class WeightVersionReport(TypedDict):
    sha256: str
    sizeBytes: int
    syncedAt: str
    status: VersionStatus
    #: The live workers that hold the version now.
    holders: list[str]
    #: ``full`` (a checkpoint of ``shards`` blobs) or ``lora`` (an adapter on ``base``).
    kind: Literal["full", "lora"]
    shards: int
    base: int | None
    acks: dict[str, SyncStatus]
    #: Per worker that refused or failed it: the error code of its ack.
    codes: dict[str, str]
    reasons: dict[str, str]
    #: Per worker: the layers a LoRA version's adapter bound there.
    boundLayers: dict[str, int]
    #: Per worker: the bytes it fetched for the version (less than sizeBytes on a delta).
    fetchedBytes: dict[str, int]
    #: Per worker: its verified bytes per source (``coordinator`` or a peer's worker id).
    sources: dict[str, dict[str, int]]
    #: Per worker that had any: how often it left a source for the next (peer fan-out).
    fallbacks: dict[str, int]


class LatestVersion(TypedDict):
    version: int
    status: VersionStatus


class WeightReport(TypedDict):
    component: str
    #: The newest version a live worker holds (what ``maxStaleness`` counts from); ``None`` when
    #: no live worker holds a synced version.
    current: int | None
    #: The newest synced version and its status (``None``: never synced).
    latest: LatestVersion | None
    versions: dict[str, WeightVersionReport]


class FleetWorker(TypedDict):
    workerId: str
    alive: bool
    host: str
    pid: int
    platform: dict[str, Any]
    version: str
    startedAt: str
    concurrency: int
    activeJobs: int
    lastHeartbeatAt: str | None
    lanes: list[str]
    models: list[str]
    weights: dict[str, int]
    kernels: dict[str, int]
    components: dict[str, int]
    #: Where peers fetch the weight ranges it holds; absent when it runs no peer server.
    peerUrl: NotRequired[str]


class Fleet(TypedDict):
    live: int
    dead: int
    workers: list[FleetWorker]


class LaneCapacity(TypedDict):
    lane: str
    requirements: dict[str, Any]
    createdAt: str
    backlog: int
    counts: dict[str, int]
    #: How many live workers satisfy the lane (their ids: ``Client.lane_workers(lane)``).
    eligibleWorkers: int
    #: The summed concurrency of those workers.
    capacity: int


class MatrixCell(TypedDict):
    registry: Literal["kernel", "component"]
    name: str
    device: str
    arch: NotRequired[str]
    variant: str
    liveWorkers: int


class Matrix(TypedDict):
    liveWorkers: int
    cells: list[MatrixCell]
    lanes: list[LaneCapacity]


class Lanes(TypedDict):
    lanes: list[LaneCapacity]


class ClassScaling(TypedDict):
    """One device class (``cuda/sm90``) in ``GET /v1/scaling``."""

    deviceClass: str
    workers: int
    capacity: int
    busy: int
    exclusiveBacklog: int
    sharedBacklog: int
    sharedAssigned: float
    jobsPerReplica: int
    desiredReplicas: int
    minReplicas: int
    maxReplicas: int
    source: Literal["live", "remembered", "configured"]


class Scaling(TypedDict):
    classes: list[ClassScaling]
    unservedBacklog: int
    rule: str


class Health(TypedDict):
    status: Literal["ok"]
    redis: Literal["up"]
