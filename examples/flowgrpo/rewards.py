"""Pluggable rewards: ``REWARDS[name](final_latents, prompts) -> rewards``.

``final_latents`` is one group's x_T, float32 ``[G, C, F, H, W]``; ``prompts`` its G prompts (the
group's prompt, repeated); the answer is float64 ``[G]``, higher is better. ``PROMPTS[name]`` is
the prompt set a reward is meant for (train.py's default).

``color`` (the default) asks for per-prompt target channel statistics: each prompt names a colour,
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
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

Reward = Callable[[np.ndarray, list[str]], np.ndarray]

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


REWARDS: dict[str, Reward] = {"color": color_reward, "zero-mean": zero_mean_reward}

#: A reference level per reward, drawn on the plot: (value, what it means).
BASELINES: dict[str, tuple[float, str]] = {
    "color": (PROMPT_BLIND_BEST, "best a prompt-blind model can do"),
}

#: The training prompts of each reward.
PROMPTS: dict[str, list[str]] = {
    "color": ["a red apple", "a green meadow", "a blue lake", "a yellow sunflower"],
    "zero-mean": ["a red fox running through fresh snow", "a paper boat drifting down a rainy street"],
}
