"""The safetensors container rules of RolloutFile v1 § 2, in the order of § 7 (reasons 1–17).

The ``safetensors`` package parses the container but does not check everything the spec asks:
it keeps one of two equal keys, does not check that the header starts with ``{``, does not check
BOOL bytes, does not accept ``2.0`` as an integer, and reports its own messages rather than the
spec's stable reason ids. :func:`check_safetensors` does every check first, so a file the
package then decodes is one the spec accepts, and a refusal names the spec's reason.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._json import DuplicateKeyError, is_integer, loads_strict
from .errors import FlowfleetError

#: The reference implementation's bound on the header length (100 MB).
MAX_HEADER_BYTES = 100_000_000
METADATA_KEY = "__metadata__"

#: dtype → bytes per element (§ 2.2).
ITEM_BYTES: Mapping[str, int] = {
    "F64": 8,
    "F32": 4,
    "F16": 2,
    "BF16": 2,
    "I64": 8,
    "I32": 4,
    "I16": 2,
    "I8": 1,
    "U8": 1,
    "BOOL": 1,
}
_ENTRY_KEYS = ["data_offsets", "dtype", "shape"]


@dataclass(frozen=True)
class TensorEntry:
    """One tensor's header entry: dtype, shape and ``[begin, end)`` in the data section."""

    dtype: str
    shape: tuple[int, ...]
    begin: int
    end: int


@dataclass(frozen=True)
class SafetensorsHeader:
    """A validated header: entries in code point order of their names, and the metadata."""

    tensors: dict[str, TensorEntry]
    metadata: dict[str, str]
    #: Offset of the data section in the file (8 + N).
    data_start: int


def safetensors_invalid(reason: str, message: str, **facts: Any) -> FlowfleetError:
    """``FMT_SAFETENSORS_INVALID`` with the spec's reason id in ``details["reason"]``."""
    return FlowfleetError("FMT_SAFETENSORS_INVALID", message, {"reason": reason, **facts})


def _header_length(data: memoryview) -> int:
    if len(data) < 8:
        raise safetensors_invalid("too-short", "shorter than the 8-byte header length", fileBytes=len(data))
    (length,) = struct.unpack_from("<Q", data, 0)
    if length > MAX_HEADER_BYTES:
        raise safetensors_invalid(
            "header-too-large", f"header length {length} is over 100 MB", headerBytes=str(length)
        )
    if 8 + length > len(data):
        raise safetensors_invalid(
            "header-out-of-bounds",
            f"header length {length} runs past the file",
            headerBytes=length,
            fileBytes=len(data),
        )
    return int(length)


def _parse_json(raw: bytes) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8")  # strict; a BOM is kept and makes the JSON invalid
    except UnicodeDecodeError as cause:
        raise safetensors_invalid("header-not-utf8", "the header is not UTF-8") from cause
    try:
        value = loads_strict(text)
    except DuplicateKeyError as duplicate:
        value = json.loads(text)  # valid JSON: only its shape decides the next rule
        if isinstance(value, dict) and text.startswith("{"):
            raise safetensors_invalid(
                "duplicate-key", f"key {duplicate.key!r} appears twice", key=duplicate.key
            ) from None
    except ValueError as cause:
        raise safetensors_invalid("header-not-json", "the header is not JSON") from cause
    if not isinstance(value, dict) or not text.startswith("{"):
        raise safetensors_invalid("header-not-object", "the header is not a JSON object starting at {")
    return value


def _parse_metadata(header: Mapping[str, object]) -> dict[str, str]:
    if METADATA_KEY not in header:
        return {}
    value = header[METADATA_KEY]
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise safetensors_invalid("metadata-not-strings", "__metadata__ is not an object of strings")
    return dict(value)


def _parse_entry(name: str, value: object) -> TensorEntry:
    if name == "":
        raise safetensors_invalid("empty-name", "a tensor has the empty name")
    if not isinstance(value, dict) or sorted(value) != _ENTRY_KEYS:
        raise safetensors_invalid(
            "entry-invalid", f"entry {name} is not {{dtype, shape, data_offsets}}", tensor=name
        )
    dtype, shape, offsets = value["dtype"], value["shape"], value["data_offsets"]
    if not isinstance(dtype, str) or dtype not in ITEM_BYTES:
        raise safetensors_invalid(
            "unsupported-dtype", f"tensor {name} has dtype {dtype}", tensor=name, dtype=str(dtype)
        )
    if not isinstance(shape, list) or not all(is_integer(d) for d in shape):
        raise safetensors_invalid("invalid-shape", f"tensor {name} has a malformed shape", tensor=name)
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(is_integer(o) for o in offsets):
        raise safetensors_invalid("invalid-offsets", f"tensor {name} has malformed data_offsets", tensor=name)
    begin, end = int(offsets[0]), int(offsets[1])
    if end < begin:
        raise safetensors_invalid(
            "invalid-offsets", f"tensor {name} ends before it begins", tensor=name, begin=begin, end=end
        )
    dims = tuple(int(d) for d in shape)
    elements = 1
    for d in dims:
        elements *= d
    expected = elements * ITEM_BYTES[dtype]
    if expected != end - begin:
        raise safetensors_invalid(
            "size-mismatch",
            f"tensor {name}: {dtype} {list(dims)} needs {expected} bytes, data_offsets span {end - begin}",
            tensor=name,
            expectedBytes=expected,
            spanBytes=end - begin,
        )
    return TensorEntry(dtype, dims, begin, end)


def _check_layout(tensors: Mapping[str, TensorEntry], data_bytes: int) -> None:
    cursor = 0
    for name, entry in sorted(tensors.items(), key=lambda item: (item[1].begin, item[1].end)):
        if entry.begin > cursor:
            raise safetensors_invalid(
                "gap", f"unused bytes before tensor {name}", tensor=name, begin=entry.begin, expected=cursor
            )
        if entry.begin < cursor:
            raise safetensors_invalid(
                "overlap",
                f"tensor {name} overlaps the tensor before it",
                tensor=name,
                begin=entry.begin,
                expected=cursor,
            )
        cursor = entry.end
    if cursor > data_bytes:
        raise safetensors_invalid(
            "truncated",
            f"the tensors need {cursor} data bytes, the file has {data_bytes}",
            neededBytes=cursor,
            dataBytes=data_bytes,
        )
    if cursor < data_bytes:
        raise safetensors_invalid(
            "trailing-bytes",
            f"{data_bytes - cursor} bytes after the last tensor",
            usedBytes=cursor,
            dataBytes=data_bytes,
        )


def check_safetensors(data: bytes | bytearray | memoryview) -> SafetensorsHeader:
    """Validates a whole safetensors file (spec § 2, reasons 1–17) and answers its header.

    Python's ``sorted`` on ``str`` is code point order, the order the spec checks tensors in.

    :raises FlowfleetError: ``FMT_SAFETENSORS_INVALID`` with ``details["reason"]``
    """
    view = memoryview(data).cast("B")
    length = _header_length(view)
    header = _parse_json(bytes(view[8 : 8 + length]))
    metadata = _parse_metadata(header)
    tensors = {name: _parse_entry(name, header[name]) for name in sorted(header) if name != METADATA_KEY}
    data_start = 8 + length
    _check_layout(tensors, len(view) - data_start)
    for name, entry in tensors.items():
        if entry.dtype == "BOOL":
            raw = bytes(view[data_start + entry.begin : data_start + entry.end])
            bad = next((i for i, byte in enumerate(raw) if byte > 1), None)
            if bad is not None:
                raise safetensors_invalid(
                    "invalid-bool", f"BOOL tensor {name} holds byte {raw[bad]}", tensor=name, index=bad
                )
    return SafetensorsHeader(tensors, metadata, data_start)


def read_safetensors_header(path: str | os.PathLike[str]) -> SafetensorsHeader:
    """The validated header of the safetensors file at ``path``, reading only its first 8 + N
    bytes (every rule but the BOOL bytes, which need the values), as formats'
    ``readSafetensorsHeader`` does.

    :raises FlowfleetError: ``FMT_FILE_IO``, ``FMT_SAFETENSORS_INVALID``
    """
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            first8 = file.read(8)
            if len(first8) < 8:
                raise safetensors_invalid(
                    "too-short", "shorter than the 8-byte header length", fileBytes=size
                )
            (length,) = struct.unpack_from("<Q", first8, 0)
            if length > MAX_HEADER_BYTES:
                raise safetensors_invalid(
                    "header-too-large", f"header length {length} is over 100 MB", headerBytes=str(length)
                )
            if 8 + length > size:
                raise safetensors_invalid(
                    "header-out-of-bounds",
                    f"header length {length} runs past the file",
                    headerBytes=length,
                    fileBytes=size,
                )
            raw = file.read(length)
    except OSError as cause:
        raise FlowfleetError(
            "FMT_FILE_IO", f"cannot read {os.fspath(path)}: {cause}", {"path": os.fspath(path)}
        ) from cause
    header = _parse_json(raw)
    metadata = _parse_metadata(header)
    tensors = {name: _parse_entry(name, header[name]) for name in sorted(header) if name != METADATA_KEY}
    _check_layout(tensors, size - 8 - int(length))
    return SafetensorsHeader(tensors, metadata, 8 + int(length))
