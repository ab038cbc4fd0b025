"""Python SDK upload bench: one PUT /v1/blobs of a body sent whole (httpx ``content=bytes``, as the
client sent it before — httpcore re-slices the rest after every socket ``send``, quadratic in the
body) against the same body in 1 MiB pieces (the client now), to a real coordinator started with
``flowfleet up``; pieces, whole, pieces in one run.

    .venv/bin/python bench/python_upload_body.py 256     # MiB
"""

import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "tests"))
import fleet_support
from flowfleet.transport import _pieces

size = int(sys.argv[1] if len(sys.argv) > 1 else "256") << 20
body = bytes(range(256)) * (size // 256)
with fleet_support.running_fleet(1, {"FLOWFLEET_MAX_BLOB_BYTES": str(size + 1024)}) as fleet:
    headers = {
        "authorization": f"Bearer {fleet.tokens['trainer']}",
        "content-type": "application/octet-stream",
        "content-length": str(size),
    }
    with httpx.Client(base_url=fleet.url, timeout=3600) as client:
        for how in ("pieces", "whole", "pieces"):
            started = time.perf_counter()
            answer = client.put("/v1/blobs", content=body if how == "whole" else _pieces(body), headers=headers)
            seconds = time.perf_counter() - started
            print(
                f"{how}: {size >> 20} MiB in {seconds:.2f} s ({(size >> 20) / seconds:.1f} MiB/s), {answer.status_code}"
            )
