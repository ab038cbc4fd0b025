"""Pluggable rewards: ``REWARDS[name]`` is a :class:`Reward` — what it scores (the final latents
or decoded frames), its score function, its prompt set and, for a frames reward, which frames
it scores by default.

- a **latents** reward is ``score(final_latents, prompts) -> rewards`` with ``final_latents`` one
  group's x_T, float32 ``[G, C, F, H, W]`` (the latents-only runs: no VAE needed);
- a **frames** reward is ``score(frames, prompts) -> rewards`` with ``frames`` one group's frame
  subset, uint8 RGB ``[G, N, H, W, 3]``, decoded by the worker (``pixel_rewards.py``);

``prompts`` is the group's G prompts (its prompt, repeated), and the answer is ``[G]`` finite
floats, higher is better. ``--reward-module path.py`` plugs in a reward from a file
(:func:`load_reward_module`: a weight-bearing scorer such as PickScore or HPS the user has on disk).

``color`` (latents) asks for per-prompt target channel statistics: each prompt names a colour,
each colour a target mean for every latent channel, and the reward is minus the mean squared
distance between the sample's per-channel spatial means and the targets. Why this one:

- **a clear, checkable optimum**: the reward is ≤ 0 and exactly 0 when every channel's mean over
  frames × height × width equals its target — a numpy one-liner to check;
- **learnable by a tiny DiT in minutes on a CPU**: it is 4 numbers per prompt, which the DiT moves
  through its output head and the cross-attention's values; the SDE's noise spreads a group's
  channel means (≈ 0.1–0.2) enough that group-normalised advantages point somewhere;
- **it depends on the prompt**: the targets differ per colour and average to zero over the
  prompt set, so a model that ignores its text can do no better than predicting the average
  (the ``PROMPT_BLIND_BEST`` bound below, −0.18): getting past it needs the text conditioning.

``zero-mean`` is a prompt-independent contrast (every channel mean at 0, the demo's reward).
``pixel-color`` is ``color``'s twin on pixels; ``jpeg-compressibility`` and
``jpeg-incompressibility`` are DDPO's (see ``pixel_rewards.py``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from frame_subset import FrameSubset
from pixel_rewards import (
    PIXEL_COLOR_PROMPT_BLIND_BEST,
    jpeg_compressibility,
    jpeg_incompressibility,
    mean_colors,
    pixel_color,
)

RewardInput = Literal["latents", "frames"]
ScoreFn = Callable[[np.ndarray, list[str]], object]
#: A per-sample diagnostic of what a reward looks at ([G, K]), reported per prompt at the end.
ProbeFn = Callable[[np.ndarray], npt.NDArray[np.float64]]


@dataclass(frozen=True)
class Reward:
    name: str
    #: What ``score`` takes: the final latents, or the decoded frame subset.
    input: RewardInput
    score: ScoreFn
    #: The training prompts it is meant for (train.py's default).
    prompts: tuple[str, ...]
    #: The frames it scores (``input == "frames"``), unless ``--reward-frames`` says otherwise.
    frames: FrameSubset = FrameSubset("first")
    #: A reference level drawn on the plot: (value, what it means).
    baseline: tuple[float, str] | None = None
    #: ``(summary key, probe)``: the last iteration's per-prompt group mean of ``probe``.
    probe: tuple[str, ProbeFn] | None = None

    def __call__(self, data: np.ndarray, prompts: list[str]) -> npt.NDArray[np.float64]:
        """``score(data, prompts)``, checked: one finite value per sample, as float64.

        :raises ValueError: when the answer is not ``[G]`` finite numbers
        """
        answer = self.score(data, prompts)
        try:
            rewards = np.asarray(answer, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise ValueError(f"reward {self.name!r} answered {type(answer).__name__}, not numbers") from error
        finite = bool(np.all(np.isfinite(rewards)))
        if rewards.shape != (len(prompts),) or not finite:
            raise ValueError(
                f"reward {self.name!r} must answer {len(prompts)} finite numbers (one per sample), "
                f"got shape {list(rewards.shape)}{'' if finite else ' with non-finite values'}"
            )
        return rewards


#: Target per-channel means of the 4-channel wan21-mini latent, per colour word.
COLOR_TARGETS: dict[str, tuple[float, ...]] = {
    "red": (0.6, -0.6, 0.0, 0.0),
    "green": (-0.6, 0.6, 0.0, 0.0),
    "blue": (0.0, 0.0, 0.6, -0.6),
    "yellow": (0.0, 0.0, -0.6, 0.6),
}
#: The best mean ``color`` reward over the four colours of a model that ignores the prompt
#: (every channel mean at the targets' average, 0): −mean over colours of |target|²/C.
PROMPT_BLIND_BEST = -float(np.mean([np.mean(np.square(t)) for t in COLOR_TARGETS.values()]))


def color_target(prompt: str, channels: int) -> npt.NDArray[np.float64]:
    """The target channel means of the first colour word in ``prompt``.

    :raises ValueError: when the prompt names no colour, or the targets do not fit ``channels``
    """
    for word in prompt.lower().replace(",", " ").split():
        target = COLOR_TARGETS.get(word)
        if target is not None:
            if len(target) != channels:
                raise ValueError(f"the color reward has {len(target)} channel targets, the latent {channels}")
            return np.asarray(target, dtype=np.float64)
    raise ValueError(f"the color reward needs a prompt naming one of {sorted(COLOR_TARGETS)}: {prompt!r}")


def channel_means(final_latents: np.ndarray) -> npt.NDArray[np.float64]:
    """Each sample's per-channel mean over frames × height × width: [G, C] float64."""
    latents = np.asarray(final_latents, dtype=np.float64)
    if latents.ndim < 3:
        raise ValueError(f"final latents must be [G, C, ...], got shape {list(latents.shape)}")
    means: npt.NDArray[np.float64] = latents.reshape(latents.shape[0], latents.shape[1], -1).mean(axis=2)
    return means


def color_reward(final_latents: np.ndarray, prompts: list[str]) -> np.ndarray:
    """−mean over channels of (channel mean − the prompt's target)², per sample; optimum 0."""
    means = channel_means(final_latents)
    if len(prompts) != means.shape[0]:
        raise ValueError(f"{means.shape[0]} samples but {len(prompts)} prompts")
    targets = np.stack([color_target(p, means.shape[1]) for p in prompts])
    rewards: np.ndarray = -np.mean(np.square(means - targets), axis=1)
    return rewards


def zero_mean_reward(final_latents: np.ndarray, prompts: list[str]) -> np.ndarray:
    """−mean over channels of (channel mean)², per sample; the prompt is not used; optimum 0."""
    rewards: np.ndarray = -np.mean(np.square(channel_means(final_latents)), axis=1)
    return rewards


_COLOR_PROMPTS = ("a red apple", "a green meadow", "a blue lake", "a yellow sunflower")
#: DDPO's JPEG rewards are prompt-independent; it trained on simple animal prompts.
_ANIMAL_PROMPTS = ("a cat", "a dog", "a horse", "a rabbit")

REWARDS: dict[str, Reward] = {
    r.name: r
    for r in (
        Reward(
            "color",
            "latents",
            color_reward,
            _COLOR_PROMPTS,
            baseline=(PROMPT_BLIND_BEST, "best a prompt-blind model can do"),
            probe=("finalChannelMeans", channel_means),
        ),
        Reward(
            "zero-mean",
            "latents",
            zero_mean_reward,
            ("a red fox running through fresh snow", "a paper boat drifting down a rainy street"),
            probe=("finalChannelMeans", channel_means),
        ),
        Reward(
            "pixel-color",
            "frames",
            pixel_color,
            _COLOR_PROMPTS,
            baseline=(PIXEL_COLOR_PROMPT_BLIND_BEST, "best a prompt-blind model can do"),
            probe=("finalMeanColors", mean_colors),
        ),
        Reward("jpeg-compressibility", "frames", jpeg_compressibility, _ANIMAL_PROMPTS),
        Reward("jpeg-incompressibility", "frames", jpeg_incompressibility, _ANIMAL_PROMPTS),
    )
}


def load_reward_module(path: Path) -> Reward:
    """The reward a Python file defines (``--reward-module``). The file is imported once, so a
    scorer loads its weights at import (or lazily on first call) and keeps them. It defines:

    - ``score(frames, prompts)`` (required): ``frames`` uint8 ``[G, N, H, W, 3]``, ``prompts`` the
      G prompts; answers G finite numbers (a list, numpy array or 1-D tensor's ``.tolist()``),
      higher is better;
    - ``PROMPTS`` (optional): the default training prompts (a list of strings);
    - ``FRAMES`` (optional): the default frame subset, ``"first"``, ``"all"`` or ``"every-K"``
      (default ``"first"``);
    - ``INPUT`` (optional): ``"frames"`` (default) or ``"latents"`` (then ``score`` gets the final
      latents, float32 ``[G, C, F, H, W]``);
    - ``NAME`` (optional): the name in logs (default: the file's stem).

    :raises ValueError: when the file cannot be imported or does not define that interface
    """
    if not path.is_file():
        raise ValueError(f"--reward-module: no such file: {path}")
    spec = importlib.util.spec_from_file_location(f"flowgrpo_reward_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"--reward-module: {path} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # the user's code: any failure is a bad module, reported as such
        failure = f"{type(error).__name__}: {error}"
        raise ValueError(f"--reward-module: importing {path} failed: {failure}") from error
    score = getattr(module, "score", None)
    if not callable(score):
        raise ValueError(f"--reward-module: {path} defines no score(frames, prompts) function")
    name = getattr(module, "NAME", path.stem)
    prompts = getattr(module, "PROMPTS", ())
    frames = getattr(module, "FRAMES", "first")
    kind: RewardInput
    kind = getattr(module, "INPUT", "frames")
    if not isinstance(name, str) or not name:
        raise ValueError(f"--reward-module: {path}: NAME must be a non-empty string")
    if not isinstance(prompts, (list, tuple)) or not all(isinstance(p, str) for p in prompts):
        raise ValueError(f"--reward-module: {path}: PROMPTS must be a list of strings")
    if kind != "frames" and kind != "latents":
        raise ValueError(f"--reward-module: {path}: INPUT must be 'frames' or 'latents', not {kind!r}")
    if not isinstance(frames, str):
        raise ValueError(f"--reward-module: {path}: FRAMES must be a string such as 'first' or 'every-4'")
    try:
        subset = FrameSubset.parse(frames)
    except ValueError as error:
        raise ValueError(f"--reward-module: {path}: FRAMES: {error}") from error
    return Reward(name, kind, score, tuple(prompts), subset)
