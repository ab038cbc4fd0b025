"""``Client``: a typed, synchronous client for every coordinator route the TypeScript SDK covers
(packages/client/README.md), with its retry policy and coded errors."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote, urlsplit

from . import _schema as schema
from .checkpoint import INDEX_SUFFIX, open_checkpoint
from .errors import FlowfleetError, invalid_option
from .retry import RetryOption, RetryPolicy, resolve_retry
from .rollout_file import RolloutFile, read_rollout_file
from .rounds import enqueue_round
from .safetensors_check import read_safetensors_header
from .transport import BODY_CHUNK_BYTES, Call, HttpTransport, RetryEvent, StreamedBody
from .types import (
    CancelledRollout,
    EnqueuedRollout,
    Fleet,
    Health,
    JobStatus,
    Lanes,
    Matrix,
    ResultUpload,
    Scaling,
    StoredBlob,
    SyncAccepted,
    WeightReport,
)
from .waiting import (
    SYNC_POLL_S,
    SYNC_TIMEOUT_S,
    WAIT_LONG_POLL_S,
    WAIT_MAX_POLL_S,
    WAIT_POLL_S,
    SyncProgress,
    check_positive,
    wait_for_job,
    wait_for_sync,
)
from .weights import WeightsSource, weights_bytes

#: Default bound on one try (s) and the default retry policy (the TypeScript SDK's).
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_RETRY = RetryPolicy()
IDEMPOTENCY_KEY_HEADER = "idempotency-key"
SUMMARY_BYTES_HEADER = "x-flowfleet-summary-bytes"
JOB_LOCK_HEADER = "x-flowfleet-job-lock"


def _segment(value: str) -> str:
    if not isinstance(value, str) or value == "":
        raise invalid_option(f"a path segment must be a non-empty string, got {value!r}", "id")
    return quote(value, safe="")


@dataclass(frozen=True)
class PushedWeights:
    """What :meth:`Client.push_weights` did: the blob, the sync, and the fleet's acks."""

    component: str
    version: int
    #: The version's content id (a single file's sha256; a sharded checkpoint's manifest).
    sha256: str
    size_bytes: int
    sync: SyncAccepted
    progress: SyncProgress
    #: Every blob uploaded (one per shard).
    blobs: tuple[StoredBlob, ...] = ()


def _lora_body(lora: Mapping[str, Any], shards: tuple[Path, ...]) -> dict[str, Any]:
    """A sync's ``lora`` object: ``config`` read from ``adapter_config.json`` beside the adapter
    unless given. :raises FlowfleetError: ``CLIENT_INVALID_OPTIONS``, ``FMT_FILE_IO``"""
    if len(shards) != 1:
        raise invalid_option("a LoRA adapter is one safetensors file, not shards", "lora")
    if "base" not in lora:
        raise invalid_option("lora needs its base version", "lora")
    body = dict(lora)
    if "config" not in body:
        config_path = shards[0].parent / "adapter_config.json"
        try:
            body["config"] = json.loads(config_path.read_text(encoding="utf-8"))
        except OSError as cause:
            raise FlowfleetError(
                "FMT_FILE_IO", f"cannot read {config_path}: {cause}", {"path": str(config_path)}
            ) from cause
        except ValueError as cause:
            raise invalid_option(f"{config_path} is not JSON", "lora") from cause
    return body


def _file_pieces(path: str | os.PathLike[str]) -> Iterator[bytes]:
    """The file's bytes in pieces of ``BODY_CHUNK_BYTES``. :raises FlowfleetError: ``FMT_FILE_IO``"""
    try:
        with open(path, "rb") as file:
            while piece := file.read(BODY_CHUNK_BYTES):
                yield piece
    except OSError as cause:
        raise FlowfleetError(
            "FMT_FILE_IO", f"cannot read {os.fspath(path)}: {cause}", {"path": os.fspath(path)}
        ) from cause


class Client:
    """A client of the coordinator at ``base_url``; nothing is sent until a method is called.

    ``token`` is the bearer token (trainer role for mutations, viewer for reads). ``timeout_s``
    bounds each try; ``retry`` is a :class:`RetryPolicy`, a mapping of its fields laid over the
    default, or False (one try); ``on_retry`` is told before each wait. ``http`` replaces httpx's
    transport (a proxy, a test double). Every method takes ``call=Call(...)`` for per-call
    options. Thread-safe; use as a context manager or call :meth:`close`.

    :raises FlowfleetError: ``CLIENT_INVALID_OPTIONS``
    """

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retry: RetryOption = None,
        on_retry: Callable[[RetryEvent], None] | None = None,
        http: Any = None,
    ) -> None:
        parts = urlsplit(base_url) if isinstance(base_url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            raise invalid_option(f"base_url must be an http(s) URL, got {base_url!r}", "base_url")
        if token is not None and (not isinstance(token, str) or token == ""):
            raise invalid_option("token must be a non-empty string when given", "token")
        if on_retry is not None and not callable(on_retry):
            raise invalid_option("on_retry must be callable when given", "on_retry")
        self.base_url = base_url.rstrip("/")
        self._timeout_s = check_positive(timeout_s, "timeout_s")
        self._http = HttpTransport(
            self.base_url,
            token,
            self._timeout_s,
            resolve_retry(retry, DEFAULT_RETRY),
            on_retry,
            http,
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the client's connections. Idempotent."""
        self._http.close()

    # Rollouts.

    def enqueue_rollouts(
        self, request: Mapping[str, Any], *, idempotency_key: str | None = None, call: Call | None = None
    ) -> EnqueuedRollout:
        """Enqueues one rollout (a prompt × a group of seeds) on the lane of its requirements.

        Every try carries the same ``Idempotency-Key`` (a UUID; default a fresh one per call), so a
        retry whose first try reached the coordinator answers the job that try enqueued.

        :raises FlowfleetError: ``PROTO_INVALID_REQUEST``, ``MODEL_INVALID_REQUEST``,
            ``API_NO_CAPACITY`` (unless ``waitForCapacity``), ``API_WEIGHT_VERSION_UNAVAILABLE``,
            ``API_IDEMPOTENCY_CONFLICT``, ``API_UNAUTHORIZED``, ``API_FORBIDDEN``, transport codes
        """
        if not isinstance(request, Mapping):
            raise invalid_option("a rollout request is a mapping", "request")
        key = str(uuid.uuid4()) if idempotency_key is None else idempotency_key
        return cast(
            EnqueuedRollout,
            self._http.request_json(
                "POST",
                "/v1/rollouts",
                schema.ENQUEUED,
                idempotent=True,
                json_body=dict(request),
                headers={IDEMPOTENCY_KEY_HEADER: key},
                call=call,
            ),
        )

    def enqueue_round(
        self,
        groups: Sequence[Mapping[str, Any]],
        common: Mapping[str, Any],
        *,
        call: Call | None = None,
    ) -> list[EnqueuedRollout]:
        """Enqueues one rollout per group (``{"prompt", "seeds"}`` and any per-group fields, e.g.
        ``promptEmbeds``, over the ``common`` fields), a
        few at a time, answered in the order of ``groups``. At the first failure no further group
        is sent; the error keeps its code and lists the rollouts already enqueued in
        ``details["enqueued"]``.

        :raises FlowfleetError: as :meth:`enqueue_rollouts`
        """
        return enqueue_round(self, groups, common, call=call)

    def status(
        self,
        id: str,
        *,
        call: Call | None = None,
        wait_s: float | None = None,
        seen: JobStatus | None = None,
    ) -> JobStatus:
        """A rollout job's status. With ``wait_s`` (≤ 30) and the status last ``seen``, a long-poll:
        the coordinator answers once the job differs from ``seen``, finishes, or ``wait_s`` passes
        (the call's timeout is stretched by ``wait_s``).

        :raises FlowfleetError: ``API_JOB_NOT_FOUND``, transport codes
        """
        path = f"/v1/rollouts/{_segment(id)}"
        if wait_s is None or seen is None:
            return cast(JobStatus, self._get(path, schema.JOB_STATUS, call))
        wait_ms = int(wait_s * 1000)
        query = (
            f"?waitMs={wait_ms}&status={seen['status']}"
            f"&step={seen['progress']['step']}&attempts={seen['attempts']}"
        )
        base = call if call is not None else Call()
        per_try = (base.timeout_s if base.timeout_s is not None else self._timeout_s) + wait_s
        stretched = Call(
            timeout_s=per_try,
            retry=base.retry,
            max_response_bytes=base.max_response_bytes,
            cancel=base.cancel,
        )
        return cast(JobStatus, self._get(path + query, schema.JOB_STATUS, stretched))

    def cancel_rollout(self, id: str, *, call: Call | None = None) -> CancelledRollout:
        """Cancels a queued rollout (trainer role): it is removed from its lane and never runs. A
        running job is not abandoned — it finishes and stores its result — so cancelling one is
        refused, as is cancelling a finished one. Retried like a read: a retry after a cancel that
        landed answers ``API_JOB_NOT_FOUND``.

        :raises FlowfleetError: ``API_JOB_NOT_CANCELLABLE`` (``details["status"]``: active,
            completed or failed), ``API_JOB_NOT_FOUND``, ``API_FORBIDDEN``, transport codes
        """
        return cast(
            CancelledRollout,
            self._http.request_json(
                "DELETE", f"/v1/rollouts/{_segment(id)}", schema.CANCELLED, idempotent=True, call=call
            ),
        )

    def wait_for(
        self,
        id: str,
        *,
        on_progress: Callable[[JobStatus], None] | None = None,
        progress: bool | None = None,
        poll_s: float = WAIT_POLL_S,
        max_poll_s: float = WAIT_MAX_POLL_S,
        timeout_s: float | None = None,
        cancel: threading.Event | None = None,
        long_poll_s: float = WAIT_LONG_POLL_S,
    ) -> JobStatus:
        """Waits until job ``id`` completes and answers its final status (each request long-polls
        for ``long_poll_s``, 0 polls with backoff instead; a tqdm bar when tqdm is installed and
        stderr is a terminal, or ``progress=True``).

        :raises FlowfleetError: ``CLIENT_JOB_FAILED`` (the server's envelope in
            ``details["error"]``), ``CLIENT_TIMEOUT``, ``CLIENT_ABORTED``, and those of :meth:`status`
        """
        return wait_for_job(
            self,
            id,
            on_progress=on_progress,
            progress=progress,
            poll_s=poll_s,
            max_poll_s=max_poll_s,
            timeout_s=timeout_s,
            cancel=cancel,
            long_poll_s=long_poll_s,
        )

    def get_result(self, id: str, *, call: Call | None = None) -> RolloutFile:
        """A completed rollout's result, read as RolloutFile v1 into numpy arrays.

        :raises FlowfleetError: ``API_RESULT_NOT_FOUND``, ``API_JOB_NOT_FOUND``,
            ``FMT_SAFETENSORS_INVALID``, ``FMT_ROLLOUT_INVALID``, transport codes
        """
        return read_rollout_file(self.get_result_bytes(id, call=call))

    def get_result_bytes(self, id: str, *, call: Call | None = None) -> bytes:
        """A completed rollout's safetensors bytes. :raises FlowfleetError: as :meth:`get_result`"""
        return self._http.read_bytes("GET", f"/v1/rollouts/{_segment(id)}/result", call=call)

    def upload_results(
        self, id: str, summary: bytes, result: bytes, *, lock_token: str, call: Call | None = None
    ) -> ResultUpload:
        """Stores job ``id``'s ``summary.json`` and ``result.safetensors`` in one request (worker
        role), as the attempt that holds the job with ``lock_token``; written once: ``created``, or
        ``unchanged`` for the same bytes again.

        :raises FlowfleetError: ``API_RESULT_NOT_HOLDER`` (``lock_token`` is not the job's lock),
            ``API_RESULT_MISMATCH`` (the summary does not describe the job's request),
            ``API_RESULT_CONFLICT``, ``API_JOB_NOT_FOUND``, ``API_BLOB_TOO_LARGE``,
            ``API_INVALID_BODY``, transport codes
        """
        return cast(
            ResultUpload,
            self._http.request_json(
                "PUT",
                f"/v1/results/{_segment(id)}",
                schema.RESULT_UPLOAD,
                idempotent=True,
                content=bytes(summary) + bytes(result),
                headers={SUMMARY_BYTES_HEADER: str(len(summary)), JOB_LOCK_HEADER: lock_token},
                call=call,
            ),
        )

    # The fleet.

    def fleet(self, *, call: Call | None = None) -> Fleet:
        """Every registered worker, live and dead. :raises FlowfleetError: transport codes"""
        return cast(Fleet, self._get("/v1/fleet", schema.FLEET, call))

    def lane_workers(self, lane: str, *, call: Call | None = None) -> Fleet:
        """The live workers that can serve ``lane``: the ids behind its ``eligibleWorkers`` count.

        :raises FlowfleetError: ``API_LANE_NOT_FOUND``, ``API_INVALID_PARAMS``, transport codes
        """
        return cast(Fleet, self._get(f"/v1/fleet?lane={_segment(lane)}", schema.FLEET, call))

    def matrix(self, *, call: Call | None = None) -> Matrix:
        """The capability matrix with lane backlog and capacity. :raises FlowfleetError: transport codes"""
        return cast(Matrix, self._get("/v1/fleet/matrix", schema.MATRIX, call))

    def lanes(self, *, call: Call | None = None) -> Lanes:
        """Every recorded lane. :raises FlowfleetError: transport codes"""
        return cast(Lanes, self._get("/v1/lanes", schema.LANES, call))

    def scaling(self, device_class: str | None = None, *, call: Call | None = None) -> Scaling:
        """Scaling hints per device class (``cuda/sm90``): live workers, capacity, exclusive and
        shared backlog, ``desiredReplicas`` and the rule; with ``device_class``, that class only.

        :raises FlowfleetError: ``API_DEVICE_CLASS_NOT_FOUND``, ``API_INVALID_PARAMS``, transport codes
        """
        query = "" if device_class is None else f"?deviceClass={_segment(device_class)}"
        return cast(Scaling, self._get(f"/v1/scaling{query}", schema.SCALING, call))

    def health(self, *, call: Call | None = None) -> Health:
        """Liveness and Redis reachability.

        :raises FlowfleetError: ``COORD_REDIS_UNAVAILABLE``, transport codes
        """
        return cast(Health, self._get("/healthz", schema.HEALTH, call))

    def metrics(self, *, call: Call | None = None) -> str:
        """The Prometheus metrics text. :raises FlowfleetError: transport codes"""
        return self._http.read_text("GET", "/metrics", call=call)

    def openapi(self, *, call: Call | None = None) -> dict[str, Any]:
        """The coordinator's OpenAPI 3.1 document. :raises FlowfleetError: transport codes"""
        return cast("dict[str, Any]", self._get("/openapi.json", schema.OBJECT, call))

    # Blobs and weights.

    def upload_blob(self, data: bytes, *, call: Call | None = None) -> StoredBlob:
        """Uploads a blob (e.g. weights) and checks the coordinator's sha256 and size against the
        bytes sent. :raises FlowfleetError: ``CLIENT_BLOB_MISMATCH``, ``API_BLOB_TOO_LARGE``, transport codes
        """
        data = bytes(data)
        local = hashlib.sha256(data).hexdigest()
        stored = cast(
            StoredBlob,
            self._http.request_json(
                "PUT", "/v1/blobs", schema.STORED_BLOB, idempotent=True, content=data, call=call
            ),
        )
        if stored["sha256"] != local or stored["sizeBytes"] != len(data):
            raise FlowfleetError(
                "CLIENT_BLOB_MISMATCH",
                f"the coordinator stored {stored['sha256']} ({stored['sizeBytes']} bytes) for bytes "
                f"whose sha256 is {local} ({len(data)} bytes)",
                {"expected": {"sha256": local, "sizeBytes": len(data)}, "received": dict(stored)},
            )
        return stored

    def upload_blob_file(self, path: str | os.PathLike[str], *, call: Call | None = None) -> StoredBlob:
        """Uploads a safetensors file from disk in pieces (never whole in memory: a checkpoint
        shard is gigabytes) after checking its header, and checks the coordinator's sha256 and size
        against the file's. :raises FlowfleetError: ``FMT_FILE_IO``, ``FMT_SAFETENSORS_INVALID``,
        ``CLIENT_BLOB_MISMATCH``, ``API_BLOB_TOO_LARGE``, transport codes
        """
        read_safetensors_header(path)
        digest = hashlib.sha256()
        size = 0
        for piece in _file_pieces(path):
            digest.update(piece)
            size += len(piece)
        local = digest.hexdigest()
        stored = cast(
            StoredBlob,
            self._http.request_json(
                "PUT",
                "/v1/blobs",
                schema.STORED_BLOB,
                idempotent=True,
                content=StreamedBody(size, lambda: _file_pieces(path)),
                call=call,
            ),
        )
        if stored["sha256"] != local or stored["sizeBytes"] != size:
            raise FlowfleetError(
                "CLIENT_BLOB_MISMATCH",
                f"the coordinator stored {stored['sha256']} ({stored['sizeBytes']} bytes) for "
                f"{os.fspath(path)}, whose sha256 is {local} ({size} bytes)",
                {"expected": {"sha256": local, "sizeBytes": size}, "received": dict(stored)},
            )
        return stored

    def download_blob(self, sha256: str, *, call: Call | None = None) -> bytes:
        """A blob's bytes, sha256 checked.

        :raises FlowfleetError: ``CLIENT_BLOB_MISMATCH``, ``API_BLOB_NOT_FOUND``, transport codes
        """
        data = self.get_blob_bytes(sha256, call=call)
        local = hashlib.sha256(data).hexdigest()
        if local != sha256:
            raise FlowfleetError(
                "CLIENT_BLOB_MISMATCH",
                f"blob {sha256} arrived as {local}",
                {"expected": {"sha256": sha256}, "received": {"sha256": local, "sizeBytes": len(data)}},
            )
        return data

    def get_blob_bytes(self, sha256: str, *, call: Call | None = None) -> bytes:
        """A blob's bytes as stored, unchecked.

        :raises FlowfleetError: ``API_BLOB_NOT_FOUND``, transport codes
        """
        return self._http.read_bytes("GET", f"/v1/blobs/{_segment(sha256)}", call=call)

    def sync_weights(
        self,
        component: str,
        version: int,
        sha256: str | Sequence[str],
        *,
        lora: Mapping[str, Any] | None = None,
        call: Call | None = None,
    ) -> SyncAccepted:
        """Makes uploaded blobs the next weight version of ``component`` (recorded, broadcast):
        one safetensors file (``sha256`` a string), the shards of a sharded checkpoint in file
        order (a sequence), or with ``lora={"base": n, "config": {…}, "expectLayers"?: m}`` a LoRA
        adapter merged into version ``n`` (``config`` is PEFT's adapter_config.json object). Sent
        once (a retry could meet ``API_STALE_VERSION``) unless the connection was refused.

        :raises FlowfleetError: ``API_STALE_VERSION``, ``API_BLOB_NOT_FOUND``, ``API_SYNC_BASE_UNKNOWN``,
            ``FMT_SAFETENSORS_INVALID``, ``FMT_CHECKPOINT_INVALID``, ``MODEL_LORA_UNBOUND``,
            ``MODEL_LORA_INVALID``, ``API_INVALID_BODY``, ``CLIENT_INVALID_OPTIONS``, transport codes
        """
        if isinstance(sha256, str):
            body: dict[str, Any] = {"version": version, "sha256": sha256}
        else:
            if lora is not None:
                raise invalid_option("a LoRA adapter is one blob, not shards", "lora")
            body = {"version": version, "shards": [{"sha256": name} for name in sha256]}
        if lora is not None:
            body["lora"] = dict(lora)
        return cast(
            SyncAccepted,
            self._http.request_json(
                "POST",
                f"/v1/weights/{_segment(component)}/sync",
                schema.SYNC_ACCEPTED,
                idempotent=False,
                json_body=body,
                call=call,
            ),
        )

    def weights(self, component: str, *, limit: int | None = None, call: Call | None = None) -> WeightReport:
        """A component's ``current`` version (the newest a live worker holds), its ``latest``
        synced version with its status, and its newest ``limit`` versions (default 20, at most
        100) with who holds each and each worker's ack and code.
        :raises FlowfleetError: ``API_INVALID_PARAMS``, transport codes
        """
        query = "" if limit is None else f"?limit={int(check_positive(limit, 'limit', integer=True))}"
        return cast(
            WeightReport, self._get(f"/v1/weights/{_segment(component)}{query}", schema.WEIGHT_REPORT, call)
        )

    def wait_for_sync(
        self,
        component: str,
        version: int,
        *,
        min_workers: int | None = None,
        timeout_s: float = SYNC_TIMEOUT_S,
        poll_s: float = SYNC_POLL_S,
        on_update: Callable[[SyncProgress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> SyncProgress:
        """Waits until ``version`` of ``component`` is loaded (ack ``ok``) by every live worker (at
        least one), or by ``min_workers`` live workers.

        :raises FlowfleetError: ``CLIENT_SYNC_FAILED``, ``CLIENT_UNKNOWN_VERSION``,
            ``CLIENT_TIMEOUT``, ``CLIENT_ABORTED``, ``CLIENT_INVALID_OPTIONS``, transport codes
        """
        return wait_for_sync(
            self,
            component,
            version,
            min_workers=min_workers,
            timeout_s=timeout_s,
            poll_s=poll_s,
            on_update=on_update,
            cancel=cancel,
        )

    def push_weights(
        self,
        weights: WeightsSource,
        *,
        component: str = "dit",
        version: int | None = None,
        dtype: str | None = None,
        lora: Mapping[str, Any] | None = None,
        min_workers: int | None = None,
        timeout_s: float = SYNC_TIMEOUT_S,
        on_update: Callable[[SyncProgress], None] | None = None,
    ) -> PushedWeights:
        """Uploads weights — a safetensors path or bytes; a checkpoint directory (one file, a PEFT
        adapter directory, or shards and their ``*.safetensors.index.json``, uploaded one shard
        at a time); or a ``state_dict`` of torch tensors or numpy arrays, F32/F16/BF16, cast to
        ``dtype`` when given — syncs them as ``version`` (default: the latest synced version + 1,
        loaded or not) and waits until every live worker (or ``min_workers``) acked it ``ok`` (the
        on-policy fence: then the version is ``current``, and ``{"exact": version}`` or
        ``{"maxStaleness": 0}`` runs on it). A version a live worker refuses raises
        ``CLIENT_SYNC_FAILED`` at once. With
        ``lora={"base": n, "config"?: {…}, "expectLayers"?: m}`` the file is a LoRA adapter merged
        into version ``n``; ``config`` defaults to the ``adapter_config.json`` beside it.

        :raises FlowfleetError: those of :func:`~flowfleet.weights.weights_bytes`,
            :func:`~flowfleet.checkpoint.open_checkpoint`, :meth:`upload_blob`,
            :meth:`sync_weights` and :meth:`wait_for_sync`
        """
        if isinstance(weights, (str, os.PathLike)) and (
            Path(weights).is_dir() or os.fspath(weights).endswith(INDEX_SUFFIX) or lora is not None
        ):
            if dtype is not None:
                raise invalid_option("dtype casts a state_dict; a checkpoint is sent as it is", "dtype")
            checkpoint = open_checkpoint(weights)
            lora_body = None if lora is None else _lora_body(lora, checkpoint.shards)
            blobs = tuple(self.upload_blob_file(path) for path in checkpoint.shards)
            sharded = checkpoint.index_path is not None
        else:
            if lora is not None:
                raise invalid_option("a LoRA adapter is a safetensors file or its directory", "lora")
            lora_body = None
            blobs = (self.upload_blob(weights_bytes(weights, dtype)),)
            sharded = False
        if version is None:
            # Past every synced version, refused ones too: the latest, not the current.
            latest = self.weights(component, limit=1)["latest"]
            version = (0 if latest is None else latest["version"]) + 1
        names = [blob["sha256"] for blob in blobs]
        accepted = self.sync_weights(component, version, names if sharded else names[0], lora=lora_body)
        progress = self.wait_for_sync(
            component, version, min_workers=min_workers, timeout_s=timeout_s, on_update=on_update
        )
        return PushedWeights(
            component, version, accepted["sha256"], accepted["sizeBytes"], accepted, progress, blobs
        )

    def _get(self, path: str, check: schema.Check, call: Call | None) -> Any:
        return self._http.request_json("GET", path, check, idempotent=True, call=call)


__all__ = ["Client", "PushedWeights", "DEFAULT_RETRY", "DEFAULT_TIMEOUT_S"]
