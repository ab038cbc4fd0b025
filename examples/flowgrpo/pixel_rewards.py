"""Rewards on decoded frames: ``score(frames, prompts) -> rewards``, with ``frames`` one group's
frame subset as uint8 RGB ``[G, N, H, W, 3]`` (what the worker decoded and returned), ``prompts``
its G prompts, and the answer float64 ``[G]``, higher is better.

- ``jpeg_compressibility`` / ``jpeg_incompressibility``: DDPO's (Black et al. 2023) weight-free
  rewards — the size in kB of each frame saved as a JPEG at quality 95 (pillow), negated for
  compressibility; a sample scores the mean over its frames.
- ``pixel_color``: a prompt-dependent reward with a clear optimum: each prompt names a colour,
  and the reward is −mean over R, G, B of (the frames' mean colour − the named colour)², in
  [0, 1] units. It is 0 exactly when every pixel has the named colour.
"""

from __future__ import annotations

import io

import numpy as np
import numpy.typing as npt
from PIL import Image

#: DDPO's JPEG quality.
JPEG_QUALITY = 95

#: The RGB colour (in [0, 1]) each colour word names.
PIXEL_COLOR_TARGETS: dict[str, tuple[float, float, float]] = {
    "red": (1.0, 0.0, 0.0),
    "green": (0.0, 1.0, 0.0),
    "blue": (0.0, 0.0, 1.0),
    "yellow": (1.0, 1.0, 0.0),
}


def _check_frames(frames: np.ndarray, prompts: list[str]) -> np.ndarray:
    if not isinstance(frames, np.ndarray) or frames.dtype != np.uint8:
        raise ValueError(f"frames must be a uint8 array, got {getattr(frames, 'dtype', type(frames))}")
    if frames.ndim != 5 or frames.shape[-1] != 3 or 0 in frames.shape:
        raise ValueError(f"frames must be [G, N ≥ 1, H, W, 3], got shape {list(frames.shape)}")
    if len(prompts) != frames.shape[0]:
        raise ValueError(f"{frames.shape[0]} samples but {len(prompts)} prompts")
    return frames


def jpeg_sizes_kb(frames: np.ndarray) -> npt.NDArray[np.float64]:
    """The size in kB (1000 bytes) of every frame as a JPEG at ``JPEG_QUALITY``: [G, N]."""
    sizes = np.empty(frames.shape[:2], dtype=np.float64)
    for g in range(frames.shape[0]):
        for n in range(frames.shape[1]):
            buffer = io.BytesIO()
            Image.fromarray(np.ascontiguousarray(frames[g, n]), mode="RGB").save(
                buffer, format="JPEG", quality=JPEG_QUALITY
            )
            sizes[g, n] = buffer.tell() / 1000
    return sizes


def jpeg_compressibility(frames: np.ndarray, prompts: list[str]) -> np.ndarray:
    """−(mean JPEG size in kB over the sample's frames): smooth, flat frames score higher."""
    rewards: np.ndarray = -jpeg_sizes_kb(_check_frames(frames, prompts)).mean(axis=1)
    return rewards


def jpeg_incompressibility(frames: np.ndarray, prompts: list[str]) -> np.ndarray:
    """+(mean JPEG size in kB over the sample's frames): busy, high-frequency frames score higher."""
    rewards: np.ndarray = jpeg_sizes_kb(_check_frames(frames, prompts)).mean(axis=1)
    return rewards


def mean_colors(frames: np.ndarray) -> npt.NDArray[np.float64]:
    """Each sample's mean colour over its frames' pixels, in [0, 1]: [G, 3] float64."""
    flat = np.asarray(frames, dtype=np.float64).reshape(frames.shape[0], -1, 3)
    colors: npt.NDArray[np.float64] = flat.mean(axis=1) / 255.0
    return colors


def named_color(prompt: str) -> npt.NDArray[np.float64]:
    """The RGB target of the first colour word in ``prompt``.

    :raises ValueError: when the prompt names no colour
    """
    for word in prompt.lower().replace(",", " ").split():
        target = PIXEL_COLOR_TARGETS.get(word)
        if target is not None:
            return np.asarray(target, dtype=np.float64)
    colors = sorted(PIXEL_COLOR_TARGETS)
    raise ValueError(f"the pixel-color reward needs a prompt naming one of {colors}: {prompt!r}")


def pixel_color(frames: np.ndarray, prompts: list[str]) -> np.ndarray:
    """−mean over R, G, B of (mean colour − the prompt's colour)², per sample; optimum 0."""
    colors = mean_colors(_check_frames(frames, prompts))
    targets = np.stack([named_color(p) for p in prompts])
    rewards: np.ndarray = -np.mean(np.square(colors - targets), axis=1)
    return rewards


#: The best mean ``pixel_color`` reward over the four colours of a prompt-blind model (every
#: sample at the targets' average colour).
PIXEL_COLOR_PROMPT_BLIND_BEST = -float(
    np.mean(
        np.square(
            np.asarray(list(PIXEL_COLOR_TARGETS.values()))
            - np.mean(list(PIXEL_COLOR_TARGETS.values()), axis=0)
        )
    )
)
