"""Loading a published Wan2.1 DiT checkpoint into :class:`Wan21DiT`: the names the fleet's card
reads (``packages/models/src/wan21/wan21-checkpoint-keys.ts``) — Wan's own (``WanModel``),
diffusers' ``WanTransformer3DModel`` and the prefixes trainers put in front — from one
safetensors file, a directory holding one, or diffusers' shards and their index
(:func:`flowfleet.checkpoint.open_checkpoint`), one tensor at a time.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import torch
from safetensors import safe_open

from ..checkpoint import open_checkpoint
from ..errors import FlowfleetError
from .config import Wan21Config
from .dit import Wan21DiT

#: diffusers' ``convert_wan_to_diffusers.py`` renames (Wan → diffusers), in its order; each
#: replaces every occurrence in turn (the norm2/norm3 swap goes through a placeholder). The same
#: list as the TS card's ``DIFFUSERS_RENAMES`` (the I2V-only rules are left out: no such tensors).
DIFFUSERS_RENAMES: tuple[tuple[str, str], ...] = (
    ("time_embedding.0", "condition_embedder.time_embedder.linear_1"),
    ("time_embedding.2", "condition_embedder.time_embedder.linear_2"),
    ("text_embedding.0", "condition_embedder.text_embedder.linear_1"),
    ("text_embedding.2", "condition_embedder.text_embedder.linear_2"),
    ("time_projection.1", "condition_embedder.time_proj"),
    ("head.modulation", "scale_shift_table"),
    ("head.head", "proj_out"),
    ("modulation", "scale_shift_table"),
    ("ffn.0", "ffn.net.0.proj"),
    ("ffn.2", "ffn.net.2"),
    ("norm2", "norm__placeholder"),
    ("norm3", "norm2"),
    ("norm__placeholder", "norm3"),
    ("self_attn.q", "attn1.to_q"),
    ("self_attn.k", "attn1.to_k"),
    ("self_attn.v", "attn1.to_v"),
    ("self_attn.o", "attn1.to_out.0"),
    ("self_attn.norm_q", "attn1.norm_q"),
    ("self_attn.norm_k", "attn1.norm_k"),
    ("cross_attn.q", "attn2.to_q"),
    ("cross_attn.k", "attn2.to_k"),
    ("cross_attn.v", "attn2.to_v"),
    ("cross_attn.o", "attn2.to_out.0"),
    ("cross_attn.norm_q", "attn2.norm_q"),
    ("cross_attn.norm_k", "attn2.norm_k"),
)
#: Prefixes in front of the names: PEFT's, diffusers pipelines', ComfyUI's, and ``model.``.
CHECKPOINT_PREFIXES = ("base_model.model.", "transformer.", "diffusion_model.", "model.")


def diffusers_name(name: str) -> str:
    """The diffusers name of a Wan2.1 DiT name (``blocks.0.self_attn.q.weight`` →
    ``blocks.0.attn1.to_q.weight``), by the renames in order."""
    for old, new in DIFFUSERS_RENAMES:
        name = name.replace(old, new)
    return name


def _lookup(names: Iterable[str]) -> dict[str, str]:
    """Every accepted checkpoint name (Wan's or diffusers') → the DiT's name."""
    table: dict[str, str] = {}
    for name in names:
        table[name] = name
        table.setdefault(diffusers_name(name), name)
    return table


def _unprefixed(key: str) -> str:
    for prefix in CHECKPOINT_PREFIXES:
        if key.startswith(prefix):
            return key[len(prefix) :]
    return key


def load_dit_checkpoint(dit: Wan21DiT, path: str | os.PathLike[str]) -> Wan21DiT:
    """Copies the checkpoint at ``path`` into ``dit``'s parameters, one tensor at a time (widened
    to the module's dtype, as the worker widens F16/BF16 to float32): every parameter exactly
    once, nothing unknown, every shape equal.

    :raises FlowfleetError: ``MODEL_WEIGHTS_MISMATCH`` listing every missing, unexpected or
        wrong-shape tensor; those of :func:`~flowfleet.checkpoint.open_checkpoint`
    """
    checkpoint = open_checkpoint(path)
    params = dict(dit.state_dict(keep_vars=True))
    lookup = _lookup(params)
    loaded: dict[str, str] = {}
    problems: list[str] = []
    with torch.no_grad():
        for shard in checkpoint.shards:
            with safe_open(os.fspath(shard), framework="pt") as file:
                for key in file.keys():  # noqa: SIM118 (safe_open is not a mapping)
                    name = lookup.get(_unprefixed(key))
                    if name is None:
                        problems.append(f"{key}: unexpected")
                        continue
                    if name in loaded:
                        problems.append(f"{key}: {name} is mapped twice (also by {loaded[name]})")
                        continue
                    tensor = file.get_tensor(key)
                    target = params[name]
                    if tuple(tensor.shape) != tuple(target.shape):
                        problems.append(f"{key}: {list(tensor.shape)}, expected {list(target.shape)}")
                        continue
                    target.copy_(tensor.to(target.dtype))
                    loaded[name] = key
    problems += [f"{name}: missing" for name in params if name not in loaded]
    if problems:
        raise FlowfleetError(
            "MODEL_WEIGHTS_MISMATCH",
            f"{os.fspath(path)} does not fit the DiT ({'; '.join(problems[:3])}"
            f"{'; …' if len(problems) > 3 else ''})",
            {"component": "dit", "problems": problems},
        )
    return dit


def dit_from_checkpoint(config: Wan21Config, path: str | os.PathLike[str]) -> Wan21DiT:
    """A float32 :class:`Wan21DiT` of ``config`` holding the checkpoint at ``path``, built without a
    random init first (a 1.3B DiT's init would cost seconds and a second 5.7 GB)."""
    with torch.device("meta"):
        dit = Wan21DiT(config)
    dit.to_empty(device="cpu")
    return load_dit_checkpoint(dit, path)
