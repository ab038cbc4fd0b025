"""The inputs of the parity tests: weight sets (the card's ``initWeights`` seeds, torch's own
init, a trained-looking perturbation), rollout requests and raw forward inputs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from torch_fleet import save_weights

from flowfleet.torch import Wan21Config, Wan21DiT, Wan21TextEncoder, tokenize


@dataclass
class WeightSet:
    """One weight set as the fleet's two blobs (F32 safetensors) and the torch modules."""

    dit_path: Path
    te_path: Path
    dit: Wan21DiT
    text_encoder: Wan21TextEncoder


def perturb(state: Mapping[str, torch.Tensor], seed: int) -> dict[str, torch.Tensor]:
    """A trained-looking version of an init: matrices drift by half their spread, biases and
    modulation tables (gates, shifts, scales) grow to O(0.3), norm weights scale by e^N(0, 0.3²)."""
    gen = torch.Generator().manual_seed(seed)
    out: dict[str, torch.Tensor] = {}
    for name, value in sorted(state.items()):
        noise = torch.randn(value.shape, generator=gen, dtype=torch.float64).to(value.dtype)
        if "norm" in name and name.endswith(".weight"):
            out[name] = value * torch.exp(0.3 * noise)
        elif value.dim() >= 2 and not name.endswith("modulation"):
            out[name] = value + 0.5 * value.std() * noise
        else:
            out[name] = value + 0.3 * noise
    return out


def modules(config: Wan21Config, dit_path: Path, te_path: Path) -> WeightSet:
    """Strict-loads both blobs into fresh modules."""
    dit = Wan21DiT(config)
    dit.load_state_dict(load_file(str(dit_path)), strict=True)
    te = Wan21TextEncoder(config)
    te.load_state_dict(load_file(str(te_path)), strict=True)
    return WeightSet(dit_path, te_path, dit.eval(), te.eval())


def from_state(
    config: Wan21Config,
    dit_state: Mapping[str, torch.Tensor],
    te_state: Mapping[str, torch.Tensor],
    workdir: Path,
    name: str,
) -> WeightSet:
    """Writes two state_dicts as F32 blobs and loads them back into modules."""
    dit_path = save_weights(dit_state, workdir / f"{name}.dit.safetensors", torch.float32)
    te_path = save_weights(te_state, workdir / f"{name}.te.safetensors", torch.float32)
    return modules(config, dit_path, te_path)


def torch_init(config: Wan21Config, seed: int, workdir: Path) -> WeightSet:
    """Weights from torch's own default initialisation of the modules."""
    torch.manual_seed(seed)
    dit, te = Wan21DiT(config), Wan21TextEncoder(config)
    return from_state(config, dit.state_dict(), te.state_dict(), workdir, f"torch{seed}")


@dataclass(frozen=True)
class RolloutCase:
    """A rollout request (the TS SamplingRequest) on a weight set."""

    weights: str
    request: dict[str, Any]

    @property
    def guidance(self) -> float:
        return float(self.request.get("guidanceScale", 4.5))


@dataclass(frozen=True)
class ForwardCase:
    """Raw component inputs: a DiT batch and a batch of prompts for the text encoder."""

    weights: str
    latent_dims: list[int]
    timesteps: list[float]
    prompts: list[str]
    seed: int

    def inputs(self, config: Wan21Config) -> dict[str, torch.Tensor]:
        gen = torch.Generator().manual_seed(self.seed)
        batch = self.latent_dims[0]
        return {
            "latent": torch.randn(self.latent_dims, generator=gen),
            "timestep": torch.tensor(self.timesteps, dtype=torch.float32),
            "context": torch.randn((batch, config.text_len, config.text_dim), generator=gen),
            "tokens": tokenize(self.prompts, config),
        }

    def write_inputs(self, config: Wan21Config, path: Path) -> dict[str, torch.Tensor]:
        inputs = self.inputs(config)
        save_file(inputs, str(path))
        return inputs


def rollout_task(ws: WeightSet, case: RolloutCase, out: Path) -> dict[str, Any]:
    """The script task running ``case`` through the fleet's runtime on ort-cpu."""
    return {
        "op": "rollout",
        "dit": str(ws.dit_path),
        "textEncoder": str(ws.te_path),
        "request": case.request,
        "out": str(out),
    }


def forward_task(dit: Path, text_encoder: Path, inputs: Path, out: Path) -> dict[str, Any]:
    """The script task running the ort-cpu components on the weight blobs and an inputs file."""
    return {
        "op": "forward",
        "dit": str(dit),
        "textEncoder": str(text_encoder),
        "inputs": str(inputs),
        "out": str(out),
    }


def negative_ids(case: RolloutCase, config: Wan21Config) -> torch.Tensor | None:
    """The request's negative prompt as ids (None: the card's default, the empty prompt)."""
    negative = case.request.get("negativePrompt")
    return None if negative is None else tokenize([negative], config)[0]
