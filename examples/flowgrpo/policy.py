"""The trainer's models: the DiT it trains, a frozen reference copy (for the KL term), and the
frozen text encoder; and the recompute of a batch of transitions' log-probs under a DiT."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping

import torch
from flowfleet.torch import Wan21Config, Wan21DiT, Wan21TextEncoder, tokenize, velocity
from torch import nn

from sde import sde_log_prob
from transitions import Transitions

#: The parameter sets train.py can train (``--train``).
TRAINABLE = ("all", "cross-attn+head")


def select_parameters(dit: nn.Module, which: str) -> list[nn.Parameter]:
    """Marks the parameters of group ``which`` trainable (the rest frozen) and returns them.

    ``all``: the whole DiT. ``cross-attn+head``: every block's cross-attention and the output head.
    """
    if which not in TRAINABLE:
        raise ValueError(f"--train must be one of {TRAINABLE}")
    chosen = []
    for name, param in dit.named_parameters():
        take = which == "all" or ".cross_attn." in name or name.startswith("head.")
        param.requires_grad_(take)
        if take:
            chosen.append(param)
    return chosen


class Policy:
    """The DiT being trained (``dit``), the frozen reference (the DiT as training started) and
    the frozen text encoder, all float32 on the CPU (the fleet's dtype)."""

    def __init__(self, config: Wan21Config, seed: int) -> None:
        torch.manual_seed(seed)
        self.config = config
        self.dit = Wan21DiT(config)
        self.text_encoder = Wan21TextEncoder(config).requires_grad_(False)
        self.reference = copy.deepcopy(self.dit).requires_grad_(False)
        self._scratch: Wan21DiT | None = None

    def state_dict(self) -> dict[str, torch.Tensor]:
        """A detached copy of the DiT's state_dict (what the fleet syncs)."""
        return {k: v.detach().clone() for k, v in self.dit.state_dict().items()}

    def dit_at(self, state: Mapping[str, torch.Tensor]) -> Wan21DiT:
        """A frozen scratch DiT holding ``state`` (an earlier version's weights)."""
        if self._scratch is None:
            self._scratch = copy.deepcopy(self.reference)
        self._scratch.load_state_dict(state, strict=True)
        return self._scratch

    def velocity(self, dit: Wan21DiT, rows: Transitions) -> torch.Tensor:
        """The CFG velocity the fleet used for each row, under ``dit``: float32 [R, C, F, H, W]."""
        g = rows.guidance
        negative = tokenize([g.negative_prompt], self.config)[0]
        return velocity(
            dit,
            self.text_encoder,
            rows.x,
            rows.timestep,
            rows.prompt_ids,
            guidance_scale=g.scale,
            negative_ids=negative,
            cfg_rule=g.rule,
        )

    def log_prob(self, dit: Wan21DiT, rows: Transitions) -> tuple[torch.Tensor, torch.Tensor]:
        """(log-prob [R] float64, SDE mean [R, …] float64) of each row's transition under ``dit``;
        differentiable in ``dit``'s trainable parameters."""
        return sde_log_prob(rows.x, self.velocity(dit, rows), rows.x_next, rows.schedule)


def chunks(size: int, rows: int) -> Iterable[slice]:
    """Slices of at most ``rows`` rows covering ``range(size)``."""
    for start in range(0, size, rows):
        yield slice(start, min(size, start + rows))
