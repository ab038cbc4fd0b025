#!/usr/bin/env python3
"""A flowfleet trainer in Python with nothing but the standard library.

Enqueues one rollout (a prompt x a group of seeds) on a flowfleet coordinator, polls its status
until it completes (printing progress), downloads the result safetensors, parses the header
(8-byte little-endian length + JSON) and reads the per-step log-probs (F64) with struct.

    python3 examples/python/trainer.py --url http://127.0.0.1:8080 --token "$TRAINER_TOKEN"

URL and token also come from FLOWFLEET_URL and FLOWFLEET_TOKEN (`flowfleet up` prints both).
Exit codes: 0 ok, 1 failure (HTTP error, failed job, timeout, malformed result), 2 usage.
"""

import argparse
import json
import os
import struct
import sys
import time
import urllib.error
import urllib.request

# safetensors dtype -> (struct format character, bytes per element)
DTYPES = {
    "F64": ("d", 8),
    "F32": ("f", 4),
    "I64": ("q", 8),
    "I32": ("i", 4),
}


class FleetError(Exception):
    """A coordinator error answer ({code, message}) or a transport failure."""

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code


class Coordinator:
    """The few coordinator routes a trainer needs, over urllib."""

    def __init__(self, url, token, timeout_s=30.0):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s

    def _request(self, method, path, body=None):
        headers = {"accept": "application/json, application/octet-stream"}
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["content-type"] = "application/json"
        request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return response.read()
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                envelope = json.loads(raw)
                raise FleetError(envelope.get("code", f"HTTP_{error.code}"), envelope.get("message", ""))
            except (ValueError, AttributeError):
                raise FleetError(f"HTTP_{error.code}", raw[:200].decode("utf-8", "replace")) from None
        except urllib.error.URLError as error:
            raise FleetError("UNREACHABLE", f"{self.url}: {error.reason}") from None

    def enqueue(self, request):
        return json.loads(self._request("POST", "/v1/rollouts", request))

    def status(self, job_id):
        return json.loads(self._request("GET", f"/v1/rollouts/{job_id}"))

    def result(self, job_id):
        return self._request("GET", f"/v1/rollouts/{job_id}/result")


def wait_for(coordinator, job_id, timeout_s):
    """Polls the job until it completes; prints a line whenever its state or step changes."""
    deadline = time.monotonic() + timeout_s
    last = None
    delay = 0.1
    while True:
        status = coordinator.status(job_id)
        progress = status["progress"]
        seen = (status["status"], progress["step"], status.get("worker"))
        if seen != last:
            worker = f" on {status['worker']}" if status.get("worker") else ""
            print(f"  {status['status']:<9} step {progress['step']}/{progress['steps']}{worker}", flush=True)
            last = seen
            delay = 0.1
        if status["status"] == "completed":
            return status
        if status["status"] == "failed":
            error = status.get("error") or {}
            raise FleetError(error.get("code", "JOB_FAILED"), error.get("message", "the rollout failed"))
        if time.monotonic() > deadline:
            raise FleetError("TIMEOUT", f"rollout {job_id} did not complete within {timeout_s} s")
        time.sleep(delay)
        delay = min(delay * 1.5, 1.0)


def read_safetensors_header(blob):
    """The header of a safetensors file: (tensors {name: {dtype, shape, data_offsets}}, metadata, data start)."""
    if len(blob) < 8:
        raise FleetError("BAD_RESULT", "shorter than the 8-byte header length")
    (header_len,) = struct.unpack_from("<Q", blob, 0)
    if 8 + header_len > len(blob):
        raise FleetError("BAD_RESULT", f"header length {header_len} exceeds the file")
    header = json.loads(blob[8 : 8 + header_len].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    return header, metadata, 8 + header_len


def read_tensor(blob, header, data_start, name):
    """One tensor as (shape, flat list of numbers), read with struct (little-endian)."""
    if name not in header:
        raise FleetError("BAD_RESULT", f"no tensor {name!r}")
    info = header[name]
    if info["dtype"] not in DTYPES:
        raise FleetError("BAD_RESULT", f"tensor {name!r} has dtype {info['dtype']}")
    fmt, size = DTYPES[info["dtype"]]
    begin, end = info["data_offsets"]
    count = 1
    for dim in info["shape"]:
        count *= dim
    if end - begin != count * size or data_start + end > len(blob):
        raise FleetError("BAD_RESULT", f"tensor {name!r} has inconsistent offsets")
    values = struct.unpack_from(f"<{count}{fmt}", blob, data_start + begin)
    return info["shape"], list(values)


def parse_seeds(text):
    seeds = []
    for part in text.split(","):
        if "-" in part:
            low, high = (int(x) for x in part.split("-", 1))
            seeds.extend(range(low, high + 1))
        else:
            seeds.append(int(part))
    return seeds


def main(argv=None):
    parser = argparse.ArgumentParser(description="Enqueue a flowfleet rollout and read its log-probs.")
    parser.add_argument("--url", default=os.environ.get("FLOWFLEET_URL", "http://127.0.0.1:8080"))
    parser.add_argument("--token", default=os.environ.get("FLOWFLEET_TOKEN"))
    parser.add_argument("--prompt", default="a red fox running through fresh snow")
    parser.add_argument("--seeds", type=parse_seeds, default=[1, 2, 3, 4], help="e.g. 1,2,3 or 1-4")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--frames", type=int, default=1)
    parser.add_argument("--size", type=int, default=8, help="latent height and width")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for the rollout")
    args = parser.parse_args(argv)

    coordinator = Coordinator(args.url, args.token)
    request = {
        "model": "wan21-mini",
        "prompt": args.prompt,
        "seeds": args.seeds,
        "steps": args.steps,
        "sampler": "sde",
        "shape": {"frames": args.frames, "height": args.size, "width": args.size},
    }
    try:
        enqueued = coordinator.enqueue(request)
        job_id = enqueued["id"]
        print(f"enqueued {job_id} on {enqueued['lane']} ({enqueued['eligibleWorkers']} eligible workers)")
        status = wait_for(coordinator, job_id, args.timeout)
        summary = status["summary"]
        backends = ",".join(sorted(set(summary["backend"].values())))
        print(f"completed on {summary['worker']} ({backends}) in {summary['timings']['totalMs']:.0f} ms, "
              f"weights {summary['weightsVersions']}")

        blob = coordinator.result(job_id)
        header, metadata, data_start = read_safetensors_header(blob)
        print(f"result: {len(blob)} bytes, {len(header)} tensors, metadata keys {sorted(metadata)}")
        for name in sorted(header):
            info = header[name]
            print(f"  {name:<14} {info['dtype']:<4} {info['shape']}")

        shape, values = read_tensor(blob, header, data_start, "log_probs")
        steps, group = shape
        print(f"log_probs F64 {shape} (step-major):")
        for sample, seed in enumerate(args.seeds):
            row = [values[step * group + sample] for step in range(steps)]
            print(f"  seed {seed}: sum {sum(row):.6f}  per step " + " ".join(f"{v:.6f}" for v in row))
    except FleetError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
