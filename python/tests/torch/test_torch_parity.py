"""The torch wan21 modules against the fleet's ONNX Runtime backend (ort-cpu, real
onnxruntime-node sessions through the worker's runtime), same weights and inputs.

Tolerance: ``ORT_PARITY_TOLERANCE`` (packages/backends/src/ort-cells.ts), the bound the ort cells
state in their registration and the conformance suite holds every ort component's forward to
against the card's TS reference: ``within``'s "max-abs ≤ atol or max-rel ≤ rtol", 1e-5 / 1e-5.
The script reports it, so the test uses the repo's number. A CFG velocity v_u + w·(v_c − v_u)
is a combination of two forwards each within atol, so its bound is (|1 − w| + w)·atol.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors.torch import load_file
from torch_cases import (
    ForwardCase,
    RolloutCase,
    WeightSet,
    forward_task,
    from_state,
    modules,
    negative_ids,
    perturb,
    rollout_task,
    torch_init,
)
from torch_fleet import figures, run_job

from flowfleet.torch import WAN21_MINI, Wan21Config, tokenize, velocity

CUSTOM = {
    "inChannels": 3,
    "patch": [2, 2, 2],
    "dim": 96,
    "ffnDim": 192,
    "freqDim": 32,
    "heads": 6,
    "layers": 1,
    "textDim": 32,
    "textLen": 8,
    "textHidden": 48,
}

ROLLOUTS = {
    "init11-cfg-2x8x8": RolloutCase(
        "init11",
        {
            "prompt": "a red fox in the snow",
            "seeds": [3, 4],
            "steps": 4,
            "sampler": "sde",
            "guidanceScale": 4.5,
            "shape": {"frames": 2, "height": 8, "width": 8},
        },
    ),
    "torch-b1-1x4x6": RolloutCase(
        "torch5",
        {
            "prompt": "crème brûlée ☕ on a long table",
            "seeds": [9],
            "steps": 3,
            "sampler": "ode",
            "guidanceScale": 1,
            "shape": {"frames": 1, "height": 4, "width": 6},
        },
    ),
    "trained-cfg-4x16x16": RolloutCase(
        "trained7",
        {
            "prompt": "a blue whale",
            "negativePrompt": "blurry, low quality",
            "seeds": [5, 6, 7],
            "steps": 3,
            "sampler": "sde",
            "guidanceScale": 3.0,
        },
    ),
}
FORWARDS = {
    "trained-b4-2x8x12": ForwardCase(
        "trained7",
        [4, 4, 2, 8, 12],
        [999, 12.125, 0.5, 500.3],
        ["", "a cat", "crème brûlée ☕ longer than L", "x" * 40],
        21,
    ),
    "init11-b1-4x16x16": ForwardCase("init11", [1, 4, 4, 16, 16], [937.5], ["a cat"], 22),
}
CUSTOM_ROLLOUT = RolloutCase(
    "init3",
    {
        "prompt": "a custom card",
        "seeds": [1, 2],
        "steps": 3,
        "sampler": "sde",
        "guidanceScale": 2.0,
        "shape": {"frames": 4, "height": 4, "width": 6},
    },
)
CUSTOM_FORWARD = ForwardCase("init3", [2, 3, 4, 12, 8], [10.0, 990.0], ["a", "bb"], 23)


@dataclass
class Parity:
    config: Wan21Config
    tolerance: dict[str, float]
    weights: dict[str, WeightSet]
    rollouts: dict[str, dict[str, torch.Tensor]]
    forwards: dict[str, dict[str, torch.Tensor]]
    inputs: dict[str, dict[str, torch.Tensor]]
    info: dict[str, Any]


def _run(
    config: Any,
    seeds: list[int],
    rollouts: Mapping[str, RolloutCase],
    forwards: Mapping[str, ForwardCase],
    workdir: Path,
) -> Parity:
    """Phase 1: the card's initWeights blobs; phase 2: every rollout and forward on ort-cpu."""
    workdir.mkdir(parents=True, exist_ok=True)
    init = [
        {"op": "init", "component": c, "seed": s, "out": str(workdir / f"init{s}.{c}")}
        for s in seeds
        for c in ("dit", "text_encoder")
    ]
    first = run_job(config, init, workdir)
    cfg = Wan21Config.from_ts(first.config)
    weights = {
        f"init{s}": modules(cfg, workdir / f"init{s}.dit", workdir / f"init{s}.text_encoder") for s in seeds
    }
    weights["torch5"] = torch_init(cfg, 5, workdir)
    base = weights[f"init{seeds[-1]}"]
    weights[f"trained{seeds[-1]}"] = from_state(
        cfg,
        perturb(base.dit.state_dict(), 1),
        perturb(base.text_encoder.state_dict(), 2),
        workdir,
        "trained",
    )
    tasks, inputs = [], {}
    for name, case in rollouts.items():
        tasks.append(rollout_task(weights[case.weights], case, workdir / f"{name}.out"))
    for name, fcase in forwards.items():
        inputs[name] = fcase.write_inputs(cfg, workdir / f"{name}.in")
        ws = weights[fcase.weights]
        tasks.append(forward_task(ws.dit_path, ws.te_path, workdir / f"{name}.in", workdir / f"{name}.out"))
    second = run_job(config, tasks, workdir)
    assert not set(rollouts) & set(forwards), "case names must be unique"
    info = dict(zip(list(rollouts) + list(forwards), second.results, strict=False))
    return Parity(
        cfg,
        second.tolerance,
        weights,
        {n: load_file(str(workdir / f"{n}.out")) for n in rollouts},
        {n: load_file(str(workdir / f"{n}.out")) for n in forwards},
        inputs,
        info,
    )


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> Parity:
    return _run("wan21-mini", [11, 7], ROLLOUTS, FORWARDS, tmp_path_factory.mktemp("mini"))


@pytest.fixture(scope="module")
def custom(tmp_path_factory: pytest.TempPathFactory) -> Parity:
    return _run(
        CUSTOM,
        [3],
        {"custom-rollout": CUSTOM_ROLLOUT},
        {"custom-forward": CUSTOM_FORWARD},
        tmp_path_factory.mktemp("custom"),
    )


def _check_rollout(p: Parity, name: str, case: RolloutCase) -> None:
    out, ws = p.rollouts[name], p.weights[case.weights]
    assert p.info[name]["backend"] == {"dit": "ort-cpu", "text_encoder": "ort-cpu"}
    prompt = tokenize([case.request["prompt"]], p.config)[0]
    negative = negative_ids(case, p.config)
    cfg = case.guidance != 1
    with torch.no_grad():
        ids = torch.stack([tokenize([""], p.config)[0] if negative is None else negative, prompt])
        f = figures(ws.text_encoder(ids if cfg else prompt[None]), out["context"])
        print(f"\n{name} context: {f}")
        assert f.passes(p.tolerance), f
        amplification = abs(1 - case.guidance) + case.guidance if cfg else 1.0
        for dtype in (torch.float32, torch.float64):
            dit, te = ws.dit.to(dtype), ws.text_encoder.to(dtype)
            for i, t in enumerate(out["timesteps"].tolist()):
                v = velocity(
                    dit,
                    te,
                    out["latents"][i].to(dtype),
                    t,
                    prompt,
                    guidance_scale=case.guidance,
                    negative_ids=negative,
                )
                f = figures(v, out["velocity"][i])
                print(f"{name} {str(dtype)[6:]} step {i} t={t:.2f}: {f}")
                assert f.max_ref > 0.5  # not degenerate
                assert f.passes(p.tolerance, amplification), f
        ws.dit.float(), ws.text_encoder.float()


def _check_forward(p: Parity, name: str, case: ForwardCase) -> None:
    out, ws, inputs = p.forwards[name], p.weights[case.weights], p.inputs[name]
    with torch.no_grad():
        f = figures(ws.text_encoder(inputs["tokens"]), out["context"])
        print(f"\n{name} text_encoder: {f}")
        assert f.passes(p.tolerance), f
        for dtype in (torch.float32, torch.float64):
            dit = ws.dit.to(dtype)
            v = dit(inputs["latent"], inputs["timestep"], inputs["context"])
            f = figures(v, out["velocity"])
            print(f"{name} dit {str(dtype)[6:]}: {f}")
            assert f.max_ref > 0.5
            assert f.passes(p.tolerance), f
        ws.dit.float()


@pytest.mark.parametrize("name", list(ROLLOUTS))
def test_rollout_velocity_matches_ort(mini: Parity, name: str) -> None:
    """Every step's CFG velocity of a fleet rollout, recomputed from its stored latents."""
    _check_rollout(mini, name, ROLLOUTS[name])


@pytest.mark.parametrize("name", list(FORWARDS))
def test_component_forwards_match_ort(mini: Parity, name: str) -> None:
    """Raw DiT and text-encoder forwards at arbitrary timesteps, grids and prompts."""
    _check_forward(mini, name, FORWARDS[name])


def test_a_custom_config_matches_ort(custom: Parity) -> None:
    """A config of the card's shape other than wan21-mini (pt = 2, 3 channels, 6 heads)."""
    assert custom.config == WAN21_MINI.with_overrides(
        name=custom.config.name,
        in_channels=3,
        patch=(2, 2, 2),
        dim=96,
        ffn_dim=192,
        freq_dim=32,
        heads=6,
        layers=1,
        text_dim=32,
        text_len=8,
        text_hidden=48,
    )
    _check_rollout(custom, "custom-rollout", CUSTOM_ROLLOUT)
    _check_forward(custom, "custom-forward", CUSTOM_FORWARD)
