"""A small checker for the coordinator's JSON answers (the TypeScript SDK validates them with
protocol's zod schemas; this checks the same required fields and types, and keeps unknown keys so
that a newer coordinator's additions still parse)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._json import is_integer, is_number
from .errors import FlowfleetError

#: Appends "path: problem" to the issues for a value that does not fit.
Check = Callable[[object, str, list[str]], None]

#: What each check accepts, as data (``shape_of``): read by the test that holds these checks to
#: the OpenAPI document the coordinator serves (python/tests/test_schema_openapi.py).
_SHAPES: dict[Check, tuple[Any, ...]] = {}


def _shaped(check: Check, *shape: Any) -> Check:
    _SHAPES[check] = shape
    return check


def shape_of(check: Check) -> tuple[Any, ...]:
    """``("scalar", json_type)`` (``json_type`` None: anything), ``("literal", values)``,
    ``("nullable", inner)``, ``("list", item)``, ``("map", item)`` or
    ``("object", required, optional)`` (dicts of field → check)."""
    return _SHAPES[check]


def _simple(test: Callable[[object], bool], expected: str, json_type: str | None) -> Check:
    def check(value: object, path: str, issues: list[str]) -> None:
        if not test(value):
            issues.append(f"{path or '(root)'}: expected {expected}, got {type(value).__name__}")

    return _shaped(check, "scalar", json_type)


STR = _simple(lambda v: isinstance(v, str), "a string", "string")
BOOL = _simple(lambda v: isinstance(v, bool), "a boolean", "boolean")
INT = _simple(lambda v: is_integer(v, -(2**53 - 1)), "an integer", "integer")
COUNT = _simple(lambda v: is_integer(v, 0), "an integer ≥ 0", "integer")
NUMBER = _simple(is_number, "a number", "number")
ANY = _simple(lambda v: True, "anything", None)


def literal(*values: object) -> Check:
    def check(value: object, path: str, issues: list[str]) -> None:
        if value not in values:
            expected = " or ".join(repr(v) for v in values)
            issues.append(f"{path or '(root)'}: expected {expected}, got {type(value).__name__}")

    return _shaped(check, "literal", values)


def nullable(inner: Check) -> Check:
    def check(value: object, path: str, issues: list[str]) -> None:
        if value is not None:
            inner(value, path, issues)

    return _shaped(check, "nullable", inner)


def list_of(item: Check) -> Check:
    def check(value: object, path: str, issues: list[str]) -> None:
        if not isinstance(value, list):
            issues.append(f"{path or '(root)'}: expected an array")
            return
        for i, entry in enumerate(value):
            item(entry, f"{path}[{i}]", issues)

    return _shaped(check, "list", item)


def map_of(item: Check) -> Check:
    def check(value: object, path: str, issues: list[str]) -> None:
        if not isinstance(value, dict):
            issues.append(f"{path or '(root)'}: expected an object")
            return
        for key, entry in value.items():
            item(entry, f"{path}.{key}" if path else str(key), issues)

    return _shaped(check, "map", item)


def obj(optional: dict[str, Check] | None = None, **required: Check) -> Check:
    """An object with these required (and optional) fields; other keys are kept unchecked."""

    def check(value: object, path: str, issues: list[str]) -> None:
        if not isinstance(value, dict):
            issues.append(f"{path or '(root)'}: expected an object")
            return
        for key, field in required.items():
            where = f"{path}.{key}" if path else key
            if key not in value:
                issues.append(f"{where}: required")
            else:
                field(value[key], where, issues)
        for key, field in (optional or {}).items():
            if key in value:
                field(value[key], f"{path}.{key}" if path else key, issues)

    return _shaped(check, "object", required, optional or {})


def validate(value: Any, check: Check, what: str) -> Any:
    """Answers ``value`` when it fits ``check``.

    :raises FlowfleetError: ``CLIENT_BAD_RESPONSE`` with ``details["issues"]``
    """
    issues: list[str] = []
    check(value, "", issues)
    if issues:
        raise FlowfleetError(
            "CLIENT_BAD_RESPONSE",
            f"{what} does not fit its schema: {issues[0]}",
            {"issues": issues[:20]},
        )
    return value


ERROR_ENVELOPE = obj(code=STR, message=STR)
ENQUEUED = obj(id=STR, lane=STR, status=literal("queued"), eligibleWorkers=COUNT)
CANCELLED = obj(id=STR, lane=STR, status=literal("cancelled"))
_PROGRESS = obj(step=COUNT, steps=COUNT)
JOB_STATUS = obj(
    {"error": ERROR_ENVELOPE, "worker": STR, "summary": obj(), "startedAt": STR, "finishedAt": STR},
    id=STR,
    lane=STR,
    status=literal("queued", "active", "completed", "failed"),
    progress=_PROGRESS,
    attempts=COUNT,
    createdAt=STR,
)
STORED_BLOB = obj(sha256=STR, sizeBytes=COUNT)
RESULT_UPLOAD = obj(
    id=STR,
    sha256=STR,
    sizeBytes=COUNT,
    status=literal("created", "unchanged"),
    summary=literal("created", "kept"),
)
SYNC_ACCEPTED = obj(component=STR, version=COUNT, sha256=STR, sizeBytes=COUNT, previous=nullable(COUNT))
_VERSION_STATUS = literal("pending", "loaded", "retired", "failed", "superseded")
WEIGHT_REPORT = obj(
    component=STR,
    current=nullable(COUNT),
    latest=nullable(obj(version=COUNT, status=_VERSION_STATUS)),
    versions=map_of(
        obj(
            sha256=STR,
            sizeBytes=COUNT,
            syncedAt=STR,
            status=_VERSION_STATUS,
            holders=list_of(STR),
            kind=literal("full", "lora"),
            shards=COUNT,
            base=nullable(COUNT),
            acks=map_of(literal("ok", "refused", "failed")),
            codes=map_of(STR),
            reasons=map_of(STR),
            boundLayers=map_of(COUNT),
            fetchedBytes=map_of(COUNT),
            sources=map_of(map_of(COUNT)),
            fallbacks=map_of(COUNT),
        )
    ),
)
FLEET = obj(
    live=COUNT,
    dead=COUNT,
    workers=list_of(
        obj(
            workerId=STR,
            alive=BOOL,
            platform=obj(),
            concurrency=COUNT,
            activeJobs=COUNT,
            lanes=list_of(STR),
            models=list_of(STR),
            weights=map_of(INT),
        )
    ),
)
_LANE = obj(lane=STR, requirements=obj(), backlog=COUNT, counts=obj(), eligibleWorkers=COUNT, capacity=COUNT)
LANES = obj(lanes=list_of(_LANE))
MATRIX = obj(
    liveWorkers=COUNT,
    cells=list_of(
        obj(registry=literal("kernel", "component"), name=STR, device=STR, variant=STR, liveWorkers=COUNT)
    ),
    lanes=list_of(_LANE),
)
SCALING = obj(
    classes=list_of(
        obj(
            deviceClass=STR,
            workers=COUNT,
            capacity=COUNT,
            busy=COUNT,
            exclusiveBacklog=COUNT,
            sharedBacklog=COUNT,
            sharedAssigned=NUMBER,
            jobsPerReplica=COUNT,
            desiredReplicas=COUNT,
            minReplicas=COUNT,
            maxReplicas=COUNT,
            source=literal("live", "remembered", "configured"),
        )
    ),
    unservedBacklog=COUNT,
    rule=STR,
)
HEALTH = obj(status=literal("ok"), redis=literal("up"))
OBJECT = obj()
