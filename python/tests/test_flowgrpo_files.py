"""The FlowGRPO example on RolloutFile v2 files (the spec's own valid vectors): the trained steps'
latents are found through ``latent_steps`` (a kept window), a frames reward gets the frame subset
it asked for by frame index, and what a file does not hold is refused with what it does hold."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from frame_subset import FrameSubset
from rewards import REWARDS, Reward
from scoring import reward_input, score_groups
from transitions import build_transitions, latent_rows

import flowgrpo_support  # noqa: F401 - puts examples/flowgrpo on sys.path
from fleet_support import REPO
from flowfleet import RolloutFile, read_rollout_file
from flowfleet.torch import WAN21_MINI

V2 = REPO / "docs" / "formats" / "vectors" / "rollout-file-v2" / "valid"


def vector(name: str) -> RolloutFile:
    return read_rollout_file((V2 / f"{name}.safetensors").read_bytes())


def test_a_kept_window_maps_each_step_to_its_latent_row() -> None:
    window = vector("frames-every-2-window")  # 4 steps, kept x_1, x_2, x_4
    assert window.latent_steps.tolist() == [1, 2, 4]
    assert latent_rows(window, [1]) == {1: 0, 2: 1}
    with pytest.raises(ValueError, match=r"need the latents of steps \[0\].*\(kept: \[1, 2, 4\]\)"):
        latent_rows(window, [0, 1])
    with pytest.raises(ValueError, match=r"need the latents of steps \[3\]"):
        latent_rows(window, [1, 2, 3])


def test_transitions_of_a_file_that_kept_every_step_are_its_latents() -> None:
    every = vector("frames-first")  # 3 steps, G 2, x_0 … x_3 kept
    assert every.latent_steps.tolist() == [0, 1, 2, 3]
    rows = build_transitions([every], [np.array([1.0, -1.0])], WAN21_MINI)
    assert len(rows) == every.steps * every.group
    for r, (step, sample) in enumerate((j, g) for j in range(every.steps) for g in range(every.group)):
        assert torch.equal(rows.x[r], torch.from_numpy(np.array(every.latent(step, sample))))
        assert torch.equal(rows.x_next[r], torch.from_numpy(np.array(every.latent(step + 1, sample))))
    # A window that misses a trained step's latent is refused before any recompute.
    with pytest.raises(ValueError, match="did not keep"):
        build_transitions([vector("frames-every-2-window")], [np.zeros(2)], WAN21_MINI)


def test_a_frames_reward_gets_the_subset_it_asked_for_by_frame_index() -> None:
    clip = vector("frames-every-2-window")  # a 5-frame clip, frames 0, 2, 4 returned
    assert clip.frame_indices is not None and clip.frame_indices.tolist() == [0, 2, 4]
    assert clip.frames is not None and clip.video is not None and clip.video["frames"] == 5
    pixel = REWARDS["pixel-color"]
    every4 = reward_input(clip, pixel, FrameSubset.parse("every-4"))
    assert np.array_equal(every4, clip.frames[:, [0, 2]])
    assert np.array_equal(reward_input(clip, pixel, FrameSubset.parse("first")), clip.frames[:, :1])
    with pytest.raises(ValueError, match=r"\(all: \[0, 1, 2, 3, 4\]\) are not all in the result"):
        reward_input(clip, pixel, FrameSubset.parse("all"))
    # A latents reward reads x_T whatever the file kept.
    assert np.array_equal(reward_input(clip, REWARDS["color"], FrameSubset("first")), clip.final_latents)


def test_a_frames_reward_on_a_file_without_frames_is_refused() -> None:
    with pytest.raises(ValueError, match="holds none"):
        reward_input(vector("window-no-frames"), REWARDS["jpeg-compressibility"], FrameSubset("first"))


def test_score_groups_scores_each_group_with_its_prompt_and_reports_the_probe() -> None:
    clip = vector("frames-first")
    seen: list[tuple[tuple[int, ...], list[str]]] = []

    def brightness(frames: np.ndarray, prompts: list[str]) -> np.ndarray:
        seen.append((frames.shape, prompts))
        return np.asarray(frames, dtype=np.float64).mean(axis=(1, 2, 3, 4))

    probe = ("finalBrightness", lambda f: f.mean(axis=(1, 2, 3)))
    reward = Reward("brightness", "frames", brightness, (), probe=probe)
    scores = score_groups(reward, [clip, clip], ["a", "b"], FrameSubset("first"))
    assert clip.frames is not None
    assert seen == [((2, 1, 2, 3, 3), ["a", "a"]), ((2, 1, 2, 3, 3), ["b", "b"])]
    want = clip.frames.astype(np.float64).mean(axis=(1, 2, 3, 4))
    assert all(np.array_equal(r, want) for r in scores.rewards)
    assert set(scores.probe) == {"a", "b"} and len(scores.probe["a"]) == 3
