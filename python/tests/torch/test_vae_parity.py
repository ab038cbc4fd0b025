"""The PyTorch Wan2.1 VAE decoder against the fleet's: ``scripts/decode-wan21-vae.ts`` binds each
checkpoint with the card's key maps and decodes on the ort-cpu backend (real onnxruntime-node
sessions in the compute pool), one latent frame per forward with the causal caches fed back.

Tolerance: ``ORT_PARITY_TOLERANCE`` (packages/backends/src/ort-cells.ts), the bound the ort cells
state in their registration — ``within``'s "max-abs ≤ atol or max-rel ≤ rtol", 1e-5 / 1e-5 — read
from the script's output; the frames are in [−1, 1], so max-abs ≤ 1e-5 is the binding rule.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors.torch import load_file, save_file
from torch_fleet import REPO, figures

from flowfleet.torch import (
    WAN21_VAE,
    WAN21_VAE_MINI,
    decoder_parameters,
    load_vae_decoder,
    random_vae_weights,
    write_vae_checkpoint,
)

SCRIPT = "scripts/decode-wan21-vae.ts"
MINI = WAN21_VAE_MINI


@dataclass
class Fleet:
    tolerance: dict[str, float]
    results: list[Any]
    dir: Path
    weights: dict[str, torch.Tensor]
    latent: torch.Tensor


def _run(job: dict[str, Any], workdir: Path) -> dict[str, Any]:
    path = workdir / "job.json"
    path.write_text(json.dumps(job))
    proc = subprocess.run(
        ["npx", "tsx", "--conditions=@flowfleet/source", SCRIPT, str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{SCRIPT} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    """One job: the TS parameter lists, three binds, four decodes (eager and captured, F32 and
    BF16 checkpoints in both layouts, a one-frame clip)."""
    d = tmp_path_factory.mktemp("vae-parity")
    weights = random_vae_weights(MINI, 3)
    diffusers = write_vae_checkpoint(d / "pipeline", "diffusers", weights, MINI, torch.float32)
    # The published diffusers file holds the encoder too: the card skips its tensors.
    encoder = {
        "encoder.conv_in.weight": torch.ones(8, 3, 3, 3, 3),
        "quant_conv.weight": torch.ones(8, 8, 1, 1, 1),
    }
    save_file({**load_file(str(diffusers)), **encoder}, str(diffusers))
    wan = write_vae_checkpoint(d / "Wan2.1_VAE.safetensors", "wan", weights, MINI, torch.float32)
    wan_bf16 = write_vae_checkpoint(d / "Wan2.1_VAE.bf16.safetensors", "wan", weights, MINI, torch.bfloat16)
    bad = d / "bad.safetensors"
    broken = {k: v for k, v in weights.items() if k != "decoder.head.0.gamma"}
    save_file({**broken, "decoder.upsamples.99.time_conv.weight": torch.zeros(2)}, str(bad))
    gen = torch.Generator().manual_seed(5)
    latent = torch.randn(2, MINI.z_dim, 3, 2, 3, generator=gen)
    save_file({"latent": latent}, str(d / "latent.safetensors"))
    save_file({"latent": latent[:, :, :1].contiguous()}, str(d / "latent1.safetensors"))

    def decode(checkpoint: Path, out: str, captured: bool = False, latent: str = "latent") -> dict[str, Any]:
        task = {"op": "decode", "checkpoint": str(checkpoint), "latent": str(d / f"{latent}.safetensors")}
        return {**task, "out": str(d / out), "captured": captured}

    tasks = [
        {"op": "shapes"},
        {"op": "shapes", "config": WAN21_VAE.name},
        {"op": "bind", "checkpoint": str(diffusers)},
        {"op": "bind", "checkpoint": str(wan_bf16)},
        {"op": "bind", "checkpoint": str(bad)},
        decode(diffusers, "eager.safetensors"),
        decode(wan, "captured.safetensors", captured=True),
        decode(wan_bf16, "bf16.safetensors"),
        decode(wan, "one.safetensors", latent="latent1"),
    ]
    out = _run({"config": MINI.to_ts(), "tasks": tasks}, d)
    return Fleet(out["tolerance"], out["results"], d, weights, latent)


def _params(rows: list[dict[str, Any]]) -> list[tuple[str, str, tuple[int, ...]]]:
    return [(r["name"], r["diffusers"], tuple(r["dims"])) for r in rows]


def test_the_fleet_names_every_tensor_as_torch_does(fleet: Fleet) -> None:
    """Wan's and diffusers' names and the dims, in the same order, for the mini and the published decoder."""
    for rows, config in zip(fleet.results[:2], (MINI, WAN21_VAE), strict=True):
        assert _params(rows) == [(p.wan, p.diffusers, p.shape) for p in decoder_parameters(config)]


def test_the_fleet_binds_both_layouts_and_refuses_a_checkpoint_that_does_not_fit(fleet: Fleet) -> None:
    diffusers, wan_bf16, bad = fleet.results[2:5]
    assert diffusers == {"ok": True, "tensors": 86} and wan_bf16 == {"ok": True, "tensors": 86}
    assert bad["ok"] is False and bad["code"] == "MODEL_WEIGHTS_MISMATCH"
    assert bad["details"]["missing"] == ["decoder.head.0.gamma"]
    assert bad["details"]["unexpected"] == ["decoder.upsamples.99.time_conv.weight"]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_ort_decode_steps_match_torch(fleet: Fleet, dtype: torch.dtype) -> None:
    """The fleet's frames (eager, from the diffusers checkpoint) against torch's original-rule decode."""
    result = fleet.results[5]
    assert result["backend"] == "ort-cpu" and result["frames"] == [2, 3, 9, 16, 24]
    assert len(result["stepMs"]) == 3
    ort = load_file(str(fleet.dir / "eager.safetensors"))["frames"]
    module = load_vae_decoder(fleet.weights, MINI, dtype)
    with torch.no_grad():
        expected = module.decode(fleet.latent.to(dtype))
    f = figures(ort, expected)
    print(f"\nvae frames {str(dtype)[6:]}: {f}")
    inside = expected.abs() < 0.99
    assert expected.std() > 0.1 and inside.float().mean() > 0.9  # not degenerate, mostly unclamped
    assert f.passes(fleet.tolerance), f


def test_captured_equals_eager_and_one_frame_is_the_first(fleet: Fleet) -> None:
    """A captured session (weights baked, dims fixed; the Wan-named file) gives the eager frames
    bit for bit; a one-latent-frame clip decodes to the clip's first frame."""
    eager = load_file(str(fleet.dir / "eager.safetensors"))["frames"]
    assert torch.equal(load_file(str(fleet.dir / "captured.safetensors"))["frames"], eager)
    one = load_file(str(fleet.dir / "one.safetensors"))["frames"]
    assert one.shape == (2, 3, 1, 16, 24) and torch.equal(one, eager[:, :, :1])


def test_a_bf16_checkpoint_decodes_as_torch_widens_it(fleet: Fleet) -> None:
    ort = load_file(str(fleet.dir / "bf16.safetensors"))["frames"]
    module = load_vae_decoder(fleet.dir / "Wan2.1_VAE.bf16.safetensors", MINI, torch.float64)
    with torch.no_grad():
        f = figures(ort, module.decode(fleet.latent.double()))
    print(f"\nvae frames (bf16 checkpoint): {f}")
    assert f.passes(fleet.tolerance), f
