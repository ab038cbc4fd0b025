"""The trainer's models: the DiT it trains (all of it, some of it, or a LoRA adapter on it), the
frozen reference (for the KL term: a copy of the DiT as training started, or — under LoRA — the
same DiT with the adapter off), the text side (the frozen toy text encoder of a tokens card, or
the uploaded prompt embeddings of an embeddings card, zero-padded as the worker pads them); and
the recompute of a batch of transitions' log-probs under a DiT."""

from __future__ import annotations

import contextlib
import copy
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence

import torch
from flowfleet.torch import (
    Wan21Config,
    Wan21DiT,
    Wan21TextEncoder,
    dit_from_checkpoint,
    pad_prompt_embeds,
    tokenize,
    velocity,
    velocity_from_embeds,
)
from torch import nn

from lora import Lora
from sde import sde_log_prob
from transitions import Transitions

#: The parameter sets train.py can train (``--train``); ``--lora-rank`` trains an adapter instead.
TRAINABLE = ("all", "cross-attn+head")
#: A card's text input: token ids through its text encoder, or embeddings by reference.
TEXT_INPUTS = ("tokens", "embeddings")


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
    """The DiT being trained (``dit``: seeded, or a checkpoint's), float32 on the CPU (the fleet's
    dtype). ``lora`` (rank, alpha) trains an adapter on it (:class:`lora.Lora`); otherwise
    :func:`select_parameters` picks what trains and a frozen copy is the reference. A tokens card
    has its frozen text encoder; an embeddings card gets its prompts' embeddings through
    :meth:`set_embeddings`."""

    def __init__(
        self,
        config: Wan21Config,
        seed: int,
        *,
        text_input: str = "tokens",
        checkpoint: str | os.PathLike[str] | None = None,
        lora: tuple[int, float] | None = None,
        train: str = "all",
    ) -> None:
        if text_input not in TEXT_INPUTS:
            raise ValueError(f"text_input must be one of {TEXT_INPUTS}")
        torch.manual_seed(seed)
        self.config = config
        self.text_input = text_input
        self.dit = Wan21DiT(config) if checkpoint is None else dit_from_checkpoint(config, checkpoint)
        self.text_encoder = Wan21TextEncoder(config).requires_grad_(False) if text_input == "tokens" else None
        self.lora = None if lora is None else Lora(self.dit, lora[0], lora[1], seed)
        if self.lora is None:
            self.params = select_parameters(self.dit, train)
            self._reference: Wan21DiT | None = copy.deepcopy(self.dit).requires_grad_(False)
        else:
            self.params = self.lora.parameters()
            self._reference = None
        self._scratch: Wan21DiT | None = None
        self._contexts: dict[str, int] = {}
        self._context_table: torch.Tensor | None = None
        self._negative: torch.Tensor | None = None

    def set_embeddings(self, prompts: Mapping[str, torch.Tensor], negative: torch.Tensor) -> None:
        """An embeddings card's text: each prompt's embedding [L, text_dim] as uploaded, and the
        negative prompt's; the recompute pads them as the worker does (``pad_prompt_embeds``)."""
        self._contexts = {prompt: i for i, prompt in enumerate(prompts)}
        self._context_table = torch.stack([pad_prompt_embeds(e, self.config) for e in prompts.values()])
        self._negative = negative.detach().to(torch.float32)

    def state(self) -> dict[str, torch.Tensor]:
        """What a version is: a detached copy of the DiT's state_dict (what a full sync sends), or
        under LoRA the adapter's tensors (the base stays as it was)."""
        if self.lora is not None:
            return self.lora.state()
        return {k: v.detach().clone() for k, v in self.dit.state_dict().items()}

    @contextlib.contextmanager
    def reference(self) -> Iterator[Wan21DiT]:
        """The frozen reference policy (the DiT as training started) for the duration."""
        if self.lora is None:
            assert self._reference is not None
            yield self._reference
            return
        with self.lora.disabled():
            yield self.dit

    @contextlib.contextmanager
    def dit_at(self, state: Mapping[str, torch.Tensor]) -> Iterator[Wan21DiT]:
        """A DiT holding ``state`` (an earlier :meth:`state`) for the duration: a frozen scratch
        copy, or under LoRA this DiT with that adapter swapped in."""
        if self.lora is not None:
            with self.lora.holding(state):
                yield self.dit
            return
        if self._scratch is None:
            assert self._reference is not None
            self._scratch = copy.deepcopy(self._reference)
        self._scratch.load_state_dict(state, strict=True)
        yield self._scratch

    def prompt_index(self, prompts: Sequence[str]) -> list[int]:
        """Each prompt's row in the embeddings table (an embeddings card)."""
        missing = [p for p in prompts if p not in self._contexts]
        if missing:
            raise ValueError(f"no uploaded embedding for the prompts {missing}")
        return [self._contexts[p] for p in prompts]

    def velocity(self, dit: Wan21DiT, rows: Transitions) -> torch.Tensor:
        """The CFG velocity the fleet used for each row, under ``dit``: float32 [R, C, F, H, W]."""
        g = rows.guidance
        if self.text_encoder is None:
            if self._context_table is None:
                raise ValueError("an embeddings card's policy needs set_embeddings first")
            return velocity_from_embeds(
                dit,
                rows.x,
                rows.timestep,
                self._context_table[rows.prompt_index],
                guidance_scale=g.scale,
                negative_embeds=self._negative,
                cfg_rule=g.rule,
            )
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
        differentiable in ``dit``'s trainable parameters (or the adapter's)."""
        return sde_log_prob(rows.x, self.velocity(dit, rows), rows.x_next, rows.schedule)


def chunks(size: int, rows: int) -> Iterable[slice]:
    """Slices of at most ``rows`` rows covering ``range(size)``."""
    for start in range(0, size, rows):
        yield slice(start, min(size, start + rows))
