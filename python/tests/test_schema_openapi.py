"""The Python SDK's two hand-written copies of the coordinator's answers — the checks the client
runs on every answer (``flowfleet._schema``) and the typed views it returns (``flowfleet.types``)
— held to the OpenAPI document the coordinator serves (``GET /openapi.json``, generated from the
routes' zod schemas, the one description of each answer).

Per route and status: every TypedDict names exactly the answer's properties, with the same
required ones and JSON types, all the way down; every field the client's check requires is
required by the document, every optional one is a property, and their types and literals agree.
"""

from __future__ import annotations

import types as pytypes
import typing
from typing import Any, Literal, Union

import pytest

from fleet_support import Fleet
from flowfleet import _schema as schema
from flowfleet import types as t

#: (method, path, status) → (the client's check, the TypedDict it returns).
ANSWERS: dict[tuple[str, str, str], tuple[schema.Check, Any]] = {
    ("post", "/v1/rollouts", "202"): (schema.ENQUEUED, t.EnqueuedRollout),
    ("get", "/v1/rollouts/{id}", "200"): (schema.JOB_STATUS, t.JobStatus),
    ("put", "/v1/results/{id}", "201"): (schema.RESULT_UPLOAD, t.ResultUpload),
    ("put", "/v1/blobs", "201"): (schema.STORED_BLOB, t.StoredBlob),
    ("post", "/v1/weights/{component}/sync", "202"): (schema.SYNC_ACCEPTED, t.SyncAccepted),
    ("get", "/v1/weights/{component}", "200"): (schema.WEIGHT_REPORT, t.WeightReport),
    ("get", "/v1/fleet", "200"): (schema.FLEET, t.Fleet),
    ("get", "/v1/fleet/matrix", "200"): (schema.MATRIX, t.Matrix),
    ("get", "/v1/lanes", "200"): (schema.LANES, t.Lanes),
    ("get", "/v1/scaling", "200"): (schema.SCALING, t.Scaling),
    ("get", "/healthz", "200"): (schema.HEALTH, t.Health),
    ("get", "/v1/rollouts/{id}", "404"): (schema.ERROR_ENVELOPE, t.ErrorEnvelope),
}

_PY_TO_JSON = {str: "string", int: "integer", float: "number", bool: "boolean"}


class Document:
    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            ref = node["$ref"]
            assert ref.startswith("#/"), ref
            target: Any = self.document
            for part in ref[2:].split("/"):
                target = target[part]
            node = target
        return node

    def answer(self, method: str, path: str, status: str) -> dict[str, Any]:
        response = self.document["paths"][path][method]["responses"][status]
        return self.resolve(response["content"]["application/json"]["schema"])


def _json_types(node: dict[str, Any]) -> set[str]:
    """The JSON types a (resolved) schema node allows; empty: it does not say."""
    if "anyOf" in node or "oneOf" in node:
        return {x for branch in node.get("anyOf", node.get("oneOf")) for x in _json_types(branch)}
    if "type" in node:
        return {node["type"]} if isinstance(node["type"], str) else set(node["type"])
    if "const" in node:
        return {_PY_TO_JSON.get(type(node["const"]), "null")}
    if "enum" in node:
        return {_PY_TO_JSON.get(type(v), "null") for v in node["enum"]}
    return set()


def _branches(doc: Document, node: dict[str, Any]) -> list[dict[str, Any]]:
    node = doc.resolve(node)
    if "anyOf" in node or "oneOf" in node:
        return [b for x in node.get("anyOf", node.get("oneOf")) for b in _branches(doc, x)]
    return [node]


def _non_null(doc: Document, node: dict[str, Any]) -> dict[str, Any]:
    """The one non-null branch of a nullable node (the node itself when it is not a union)."""
    branches = [b for b in _branches(doc, node) if b.get("type") != "null"]
    assert len(branches) == 1, f"a union of {len(branches)} non-null branches"
    return branches[0]


def _enum(node: dict[str, Any]) -> set[Any] | None:
    if "enum" in node:
        return set(node["enum"])
    if "const" in node:
        return {node["const"]}
    return None


def _required_keys(typed: Any) -> set[str]:
    """A TypedDict's required keys. ``__required_keys__`` alone is not enough: under postponed
    annotations Python < 3.14 does not see ``NotRequired[...]`` when it builds the class."""
    extras = typing.get_type_hints(typed, include_extras=True)
    marker = getattr(typing, "NotRequired", None)
    not_required = {k for k, v in extras.items() if marker is not None and typing.get_origin(v) is marker}
    return set(typed.__required_keys__) - not_required


def compare_typed(doc: Document, hint: Any, node: dict[str, Any], where: str, issues: list[str]) -> None:
    """The TypedDict (or annotation) ``hint`` against the schema ``node``."""
    node = doc.resolve(node)
    origin = typing.get_origin(hint)
    if hint is Any:
        return
    if origin in (Union, pytypes.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) < len(typing.get_args(hint)) and "null" not in _json_types(node):
            issues.append(f"{where}: the SDK allows None, the document does not")
        if "null" in _json_types(node) and len(args) == len(typing.get_args(hint)):
            issues.append(f"{where}: the document allows null, the SDK's type does not")
        (inner,) = args
        compare_typed(doc, inner, _non_null(doc, node), where, issues)
        return
    if "null" in _json_types(node) and len(_branches(doc, node)) > 1:
        issues.append(f"{where}: the document allows null, the SDK's type does not")
        node = _non_null(doc, node)
    if origin is Literal:
        values = set(typing.get_args(hint))
        if _enum(node) != values:
            issues.append(f"{where}: the SDK's literals {sorted(values)} ≠ the document's {_enum(node)}")
        return
    if origin is list:
        if node.get("type") != "array":
            issues.append(f"{where}: the SDK has a list, the document {_json_types(node) or 'anything'}")
            return
        compare_typed(doc, typing.get_args(hint)[0], node.get("items", {}), f"{where}[]", issues)
        return
    if origin is dict:
        if node.get("type") != "object":
            issues.append(f"{where}: the SDK has a dict, the document {_json_types(node) or 'anything'}")
            return
        value_hint = typing.get_args(hint)[1]
        if value_hint is not Any and isinstance(node.get("additionalProperties"), dict):
            compare_typed(doc, value_hint, node["additionalProperties"], f"{where}.*", issues)
        return
    if typing.is_typeddict(hint):
        if node.get("type") != "object" or "properties" not in node:
            issues.append(f"{where}: the SDK has {hint.__name__}, the document no object with properties")
            return
        hints = typing.get_type_hints(hint)
        properties: dict[str, Any] = node["properties"]
        required = set(node.get("required", []))
        sdk_required = _required_keys(hint)
        if set(hints) != set(properties):
            issues.append(
                f"{where} ({hint.__name__}): the SDK's fields ≠ the document's: only in the SDK "
                f"{sorted(set(hints) - set(properties))}, only in the document "
                f"{sorted(set(properties) - set(hints))}"
            )
        if sdk_required != required:
            issues.append(
                f"{where} ({hint.__name__}): required fields differ: SDK {sorted(sdk_required)}, "
                f"document {sorted(required)}"
            )
        for name in sorted(set(hints) & set(properties)):
            compare_typed(doc, hints[name], properties[name], f"{where}.{name}", issues)
        return
    expected = _PY_TO_JSON.get(hint)
    if expected is None:
        issues.append(f"{where}: no rule for the SDK's type {hint!r}")
    elif not _json_types(node) <= {expected} | ({"integer"} if expected == "number" else set()):
        issues.append(f"{where}: the SDK has {expected}, the document {sorted(_json_types(node))}")


def compare_check(
    doc: Document, check: schema.Check, node: dict[str, Any], where: str, issues: list[str]
) -> None:
    """The client's check against the schema ``node``: nothing it demands is beyond the document."""
    node = doc.resolve(node)
    shape = schema.shape_of(check)
    kind = shape[0]
    if kind == "nullable":
        if "null" not in _json_types(node):
            issues.append(f"{where}: the check allows null, the document does not")
            compare_check(doc, shape[1], node, where, issues)
        else:
            compare_check(doc, shape[1], _non_null(doc, node), where, issues)
        return
    if "null" in _json_types(node) and len(_branches(doc, node)) > 1:
        issues.append(f"{where}: the document allows null, the check refuses it")
        node = _non_null(doc, node)
    if kind == "scalar":
        json_type = shape[1]
        allowed = {json_type} | ({"integer"} if json_type == "number" else set())
        if json_type is not None and not _json_types(node) <= allowed:
            issues.append(f"{where}: the check wants {json_type}, the document {sorted(_json_types(node))}")
    elif kind == "literal":
        if _enum(node) is None or not _enum(node) <= set(shape[1]):
            issues.append(f"{where}: the check accepts {list(shape[1])}, the document {_enum(node)}")
    elif kind == "list":
        if node.get("type") != "array":
            issues.append(f"{where}: the check wants an array")
        else:
            compare_check(doc, shape[1], node.get("items", {}), f"{where}[]", issues)
    elif kind == "map":
        if node.get("type") != "object" or not isinstance(node.get("additionalProperties"), dict):
            issues.append(f"{where}: the check wants a map")
        else:
            compare_check(doc, shape[1], node["additionalProperties"], f"{where}.*", issues)
    elif kind == "object":
        required_fields, optional_fields = shape[1], shape[2]
        if node.get("type") != "object":
            issues.append(f"{where}: the check wants an object")
            return
        properties = node.get("properties", {})
        required = set(node.get("required", []))
        for name, field in required_fields.items():
            if name not in required:
                issues.append(f"{where}.{name}: the check requires it, the document does not")
            if name in properties:
                compare_check(doc, field, properties[name], f"{where}.{name}", issues)
        for name, field in optional_fields.items():
            if name not in properties:
                issues.append(f"{where}.{name}: the check reads it, the document has no such field")
            else:
                compare_check(doc, field, properties[name], f"{where}.{name}", issues)


@pytest.fixture(scope="module")
def document(fleet: Fleet) -> Document:
    with fleet.client("viewer") as client:
        return Document(client.openapi())


@pytest.mark.parametrize("answer", sorted(ANSWERS), ids=lambda a: f"{a[0].upper()} {a[1]} {a[2]}")
def test_the_sdk_describes_each_answer_as_the_served_openapi_document_does(
    document: Document, answer: tuple[str, str, str]
) -> None:
    check, typed = ANSWERS[answer]
    node = document.answer(*answer)
    issues: list[str] = []
    compare_typed(document, typed, node, typed.__name__, issues)
    compare_check(document, check, node, typed.__name__, issues)
    assert issues == []


def test_the_comparison_sees_a_drift() -> None:
    """A field the document lacks, a required field it makes optional, a narrower literal."""
    doc = Document({})
    node = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "status": {"type": "string", "enum": ["queued"]}},
        "required": ["id"],
    }
    issues: list[str] = []
    compare_typed(doc, t.EnqueuedRollout, node, "EnqueuedRollout", issues)
    compare_check(doc, schema.ENQUEUED, node, "EnqueuedRollout", issues)
    text = "\n".join(issues)
    assert "only in the SDK ['eligibleWorkers', 'lane']" in text
    assert "required fields differ" in text
    assert "status: the check requires it, the document does not" in text
