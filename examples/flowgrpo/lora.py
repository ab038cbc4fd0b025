"""LoRA on the DiT's attention projections, as flow_grpo's Wan2.1 recipe trains it (r 32, α 64,
gaussian init, the diffusers ``to_q/to_k/to_v/to_out.0`` of both attentions), merged the way the
fleet merges an adapter into its base so the recompute is the worker's forward.

A small own LoRA rather than peft: the fleet's merge is W' = f32(W + f32(s · Σ_k B·A in float64))
(``packages/models/src/lora/merge-lora.ts``) and the trainer's forward must be that layer to keep
the log-prob ratio at 1 (ratio_err_max ≤ 1e-5). peft's layer adds s·B(A x) beside W x instead —
another rounding — and would be one more dependency. The merged layer here recomputes W' in its
backward rather than keeping it, so a step holds no per-layer copy of the 1.3B DiT's weights.

The adapter is written as PEFT writes one (``adapter_model.safetensors`` with
``base_model.model.<diffusers module>.lora_A.weight`` / ``lora_B.weight``, and
``adapter_config.json``), which the fleet's LoRA sync binds (``packages/models/src/lora``).
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from flowfleet.torch import Wan21DiT, diffusers_name
from safetensors.torch import save_file
from torch import nn

#: flow_grpo ``scripts/train_wan2_1.py``'s target modules (the card's WAN21_T2V_1_3B_RECIPE): the
#: ``add_*`` ones are I2V layers a T2V DiT does not have.
TARGET_MODULES = ("add_k_proj", "add_q_proj", "add_v_proj", "to_add_out", "to_k", "to_out.0", "to_q", "to_v")
#: The DiT's (Wan-named) layers those targets are.
WAN_TARGETS = ("self_attn.q", "self_attn.k", "self_attn.v", "self_attn.o") + tuple(
    f"cross_attn.{p}" for p in "qkvo"
)
PEFT_PREFIX = "base_model.model."


def merged_weight(weight: torch.Tensor, a: torch.Tensor, b: torch.Tensor, scale: float) -> torch.Tensor:
    """The fleet's merge: W + float32(scale · (B·A in float64)), rounded to float32."""
    delta = (scale * (b.detach().double() @ a.detach().double())).to(weight.dtype)
    return weight.detach() + delta


class _MergedLinear(torch.autograd.Function):
    """y = x W'ᵀ + bias with W' = merge(W, A, B): gradients to x, A and B (W and bias frozen);
    W' is recomputed in the backward, not saved."""

    @staticmethod
    def forward(
        ctx: Any,
        x: torch.Tensor,
        weight: torch.Tensor,
        bias: torch.Tensor | None,
        a: torch.Tensor,
        b: torch.Tensor,
        scale: float,
    ) -> torch.Tensor:
        ctx.save_for_backward(x, weight, a, b)
        ctx.scale = scale
        return F.linear(x, merged_weight(weight, a, b, scale), bias)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        x, weight, a, b = ctx.saved_tensors
        scale = ctx.scale
        grad_x = grad @ merged_weight(weight, a, b, scale) if ctx.needs_input_grad[0] else None
        # dL/dW' [out, in] = Σ_rows gradᵀ x; W' = W + s·B·A (the roundings taken as identity).
        grad_w = grad.reshape(-1, grad.shape[-1]).t() @ x.reshape(-1, x.shape[-1])
        grad_a = scale * (b.t() @ grad_w)
        grad_b = scale * (grad_w @ a.t())
        return grad_x, None, None, grad_a, grad_b, None


class Lora:
    """A LoRA adapter on ``dit``'s attention projections: A [r, in] ~ N(0, 1/r) (PEFT's
    ``init_lora_weights="gaussian"``), B [out, r] = 0, scale α / r. ``enabled`` False runs the
    base weights — the frozen reference, without a copy of the DiT. The DiT's own parameters are
    frozen and its ``state_dict()`` stays the base's."""

    def __init__(self, dit: Wan21DiT, rank: int, alpha: float, seed: int) -> None:
        if rank < 1 or alpha <= 0:
            raise ValueError("LoRA rank must be ≥ 1 and alpha > 0")
        self.rank, self.alpha, self.scale = rank, float(alpha), float(alpha) / rank
        self.enabled = True
        dit.requires_grad_(False)
        generator = torch.Generator().manual_seed(seed)
        #: The DiT's (Wan) layer name → (A, B).
        self.layers: dict[str, tuple[nn.Parameter, nn.Parameter]] = {}
        for name, module in dit.named_modules():
            if isinstance(module, nn.Linear) and name.split(".", 2)[-1] in WAN_TARGETS:
                a = torch.randn(rank, module.in_features, generator=generator) / math.sqrt(rank)
                b = torch.zeros(module.out_features, rank)
                pair = (nn.Parameter(a), nn.Parameter(b))
                self.layers[name] = pair
                module.forward = self._forward_of(module, *pair)  # type: ignore[method-assign]
        if not self.layers:
            raise ValueError("the DiT has no attention projections to adapt")

    def _forward_of(self, linear: nn.Linear, a: nn.Parameter, b: nn.Parameter) -> Any:
        def forward(x: torch.Tensor) -> torch.Tensor:
            if not self.enabled:
                return F.linear(x, linear.weight, linear.bias)
            out: torch.Tensor = _MergedLinear.apply(  # type: ignore[no-untyped-call]
                x, linear.weight, linear.bias, a, b, self.scale
            )
            return out

        return forward

    def parameters(self) -> list[nn.Parameter]:
        return [p for pair in self.layers.values() for p in pair]

    @contextlib.contextmanager
    def disabled(self) -> Iterator[None]:
        """The base weights for the duration (the frozen reference)."""
        was, self.enabled = self.enabled, False
        try:
            yield
        finally:
            self.enabled = was

    def state(self) -> dict[str, torch.Tensor]:
        """The adapter as PEFT saves it: ``base_model.model.<diffusers module>.lora_A.weight``
        [r, in] and ``….lora_B.weight`` [out, r], float32, detached copies."""
        out: dict[str, torch.Tensor] = {}
        for name, (a, b) in self.layers.items():
            module = PEFT_PREFIX + diffusers_name(f"{name}.weight")[: -len(".weight")]
            out[f"{module}.lora_A.weight"] = a.detach().clone().contiguous()
            out[f"{module}.lora_B.weight"] = b.detach().clone().contiguous()
        return out

    @contextlib.contextmanager
    def holding(self, state: Mapping[str, torch.Tensor]) -> Iterator[None]:
        """The adapter of ``state`` (an earlier :meth:`state`) for the duration."""
        saved = self.state()
        self._load(state)
        try:
            yield
        finally:
            self._load(saved)

    def _load(self, state: Mapping[str, torch.Tensor]) -> None:
        with torch.no_grad():
            for name, (a, b) in self.layers.items():
                module = PEFT_PREFIX + diffusers_name(f"{name}.weight")[: -len(".weight")]
                a.copy_(state[f"{module}.lora_A.weight"])
                b.copy_(state[f"{module}.lora_B.weight"])

    def config(self) -> dict[str, Any]:
        """PEFT's adapter_config.json for this adapter (what the fleet's LoRA sync reads)."""
        return {
            "peft_type": "LORA",
            "r": self.rank,
            "lora_alpha": self.alpha,
            "target_modules": list(TARGET_MODULES),
            "init_lora_weights": "gaussian",
            "use_rslora": False,
            "use_dora": False,
            "fan_in_fan_out": False,
            "bias": "none",
        }

    def save(self, directory: Path) -> Path:
        """Writes ``adapter_model.safetensors`` and ``adapter_config.json`` into ``directory``;
        answers the adapter file."""
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "adapter_model.safetensors"
        save_file(self.state(), str(path))
        (directory / "adapter_config.json").write_text(json.dumps(self.config(), indent=1) + "\n")
        return path
