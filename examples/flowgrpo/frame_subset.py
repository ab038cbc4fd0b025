"""Which decoded frames a pixel reward scores: the first (DanceGRPO, FastVideo), every k-th
(flow_grpo's OCR reward, verl-omni's HPSv3 take every 4th) or all of them.

The trainer asks the fleet to decode and return exactly this subset (the worker holds the
latents and decodes them; whole videos never cross the wire), and checks that the frames a
result file carries are the ones it asked for before a reward sees them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import numpy as np

SubsetKind = Literal["first", "every", "all"]
_EVERY = re.compile(r"every-([1-9][0-9]*)")


@dataclass(frozen=True)
class FrameSubset:
    kind: SubsetKind
    #: The stride of ``every`` (1 for the others).
    step: int = 1

    @staticmethod
    def parse(text: str) -> FrameSubset:
        """``first``, ``all`` or ``every-K`` (K ≥ 1).

        :raises ValueError: for anything else
        """
        if text in ("first", "all"):
            return FrameSubset(text)  # type: ignore[arg-type]
        match = _EVERY.fullmatch(text)
        if match is None:
            raise ValueError(f"a frame subset is first, all or every-K (K ≥ 1), not {text!r}")
        return FrameSubset("every", int(match.group(1)))

    def __str__(self) -> str:
        return f"every-{self.step}" if self.kind == "every" else self.kind

    def request_value(self) -> str | dict[str, int]:
        """The rollout request's ``decodeFrames`` for this subset: ``"first"``, ``"all"`` or
        ``{"every": k}``."""
        return {"every": self.step} if self.kind == "every" else self.kind

    def indices(self, frame_count: int) -> list[int]:
        """The frame indices this subset picks from a clip of ``frame_count`` frames."""
        if frame_count < 1:
            raise ValueError(f"a clip has at least one frame, not {frame_count}")
        if self.kind == "first":
            return [0]
        if self.kind == "all":
            return list(range(frame_count))
        return list(range(0, frame_count, self.step))

    def select(self, frames: np.ndarray, frame_indices: np.ndarray, frame_count: int) -> np.ndarray:
        """This subset's frames out of ``frames`` ``[G, N, H, W, 3]`` uint8 whose frame ``n`` is
        frame ``frame_indices[n]`` of a clip of ``frame_count`` frames: ``[G, N', H, W, 3]``.

        :raises ValueError: when a frame the subset needs is not among them, or the frames are not
            uint8 RGB
        """
        if frames.dtype != np.uint8 or frames.ndim != 5 or frames.shape[-1] != 3:
            raise ValueError(f"frames must be uint8 [G, N, H, W, 3], got {frames.dtype} {list(frames.shape)}")
        have = [int(i) for i in np.asarray(frame_indices).tolist()]
        if len(have) != frames.shape[1]:
            raise ValueError(f"{frames.shape[1]} frames but {len(have)} frame indices")
        want = self.indices(frame_count)
        missing = sorted(set(want) - set(have))
        if missing:
            raise ValueError(
                f"the reward's frames ({self}: {want}) are not all in the result (it holds {have}); "
                "ask the fleet for them"
            )
        picked: np.ndarray = frames[:, [have.index(i) for i in want]]
        return picked
