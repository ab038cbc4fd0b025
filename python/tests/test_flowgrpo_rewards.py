"""The FlowGRPO example's pixel rewards, frame subsets and ``--reward-module`` loading, without a
fleet: DDPO's JPEG rewards order flat and busy frames as DDPO does, ``pixel-color`` is 0 exactly
at the named colour and depends on the prompt, bad frames and bad modules are refused."""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pytest
from frame_subset import FrameSubset
from PIL import Image
from pixel_rewards import (
    PIXEL_COLOR_PROMPT_BLIND_BEST,
    PIXEL_COLOR_TARGETS,
    jpeg_compressibility,
    jpeg_incompressibility,
    jpeg_sizes_kb,
    pixel_color,
)
from rewards import REWARDS, Reward, load_reward_module

import flowgrpo_support  # noqa: F401 - puts examples/flowgrpo on sys.path

RNG = np.random.default_rng(0)


def frames_of(*images: np.ndarray) -> np.ndarray:
    """One sample per image, one frame each: [G, 1, H, W, 3]."""
    return np.stack(images)[:, None]


def test_jpeg_sizes_are_the_bytes_of_a_quality_95_jpeg_in_kb() -> None:
    image = RNG.integers(0, 256, (16, 24, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="JPEG", quality=95)
    assert jpeg_sizes_kb(frames_of(image))[0, 0] == len(buffer.getvalue()) / 1000


def test_jpeg_rewards_prefer_flat_frames_and_busy_frames_and_average_over_frames() -> None:
    flat = np.full((64, 64, 3), 120, dtype=np.uint8)
    busy = RNG.integers(0, 256, (64, 64, 3), dtype=np.uint8)
    frames, prompts = frames_of(flat, busy), ["a cat", "a cat"]
    small, large = jpeg_sizes_kb(frames)[:, 0]
    assert small < large / 4
    assert jpeg_compressibility(frames, prompts).tolist() == [-small, -large]
    assert jpeg_incompressibility(frames, prompts).tolist() == [small, large]
    # A sample of two frames scores the mean of its frames.
    both = np.stack([flat, busy])[None]
    assert jpeg_incompressibility(both, ["a cat"])[0] == pytest.approx((small + large) / 2, rel=1e-12)


def test_pixel_color_is_zero_exactly_at_the_named_colour_and_depends_on_the_prompt() -> None:
    for word, rgb in PIXEL_COLOR_TARGETS.items():
        image = np.empty((8, 8, 3), dtype=np.uint8)
        image[:] = np.round(np.asarray(rgb) * 255).astype(np.uint8)
        prompt = f"a {word} thing"
        assert pixel_color(frames_of(image), [prompt])[0] == 0
        off = image.copy()
        off[:4] = 128  # half the pixels grey
        assert pixel_color(frames_of(off), [prompt])[0] < -0.02
    red = np.zeros((8, 8, 3), dtype=np.uint8)
    red[..., 0] = 255
    scores = {p: pixel_color(frames_of(red), [p])[0] for p in REWARDS["pixel-color"].prompts}
    assert scores["a red apple"] == 0 and all(s < -0.3 for p, s in scores.items() if p != "a red apple")


def test_a_prompt_blind_sample_at_the_average_colour_scores_the_blind_bound() -> None:
    """Every sample at the average of the four targets, (0.5, 0.5, 0.25): the mean over the
    four prompts is PIXEL_COLOR_PROMPT_BLIND_BEST (up to the uint8 rounding of the colour)."""
    image = np.zeros((4, 4, 3), dtype=np.uint8)
    image[:2, :, :2] = 255  # half the pixels (1, 1, 0), half (0, 0, 0)...
    image[:1, :, 2] = 255  # ...and a quarter with blue: mean (0.5, 0.5, 0.25) exactly
    scores = [pixel_color(frames_of(image), [p])[0] for p in REWARDS["pixel-color"].prompts]
    assert math.isclose(float(np.mean(scores)), PIXEL_COLOR_PROMPT_BLIND_BEST, rel_tol=1e-12)
    assert PIXEL_COLOR_PROMPT_BLIND_BEST == pytest.approx(-0.2292, abs=1e-4)


@pytest.mark.parametrize(
    ("frames", "prompts", "match"),
    [
        (np.zeros((1, 1, 4, 4, 3), np.float32), ["a red apple"], "uint8"),
        (np.zeros((1, 4, 4, 3), np.uint8), ["a red apple"], r"\[G, N ≥ 1, H, W, 3\]"),
        (np.zeros((1, 1, 4, 4, 4), np.uint8), ["a red apple"], r"\[G, N ≥ 1, H, W, 3\]"),
        (np.zeros((1, 0, 4, 4, 3), np.uint8), ["a red apple"], r"\[G, N ≥ 1, H, W, 3\]"),
        (np.zeros((2, 1, 4, 4, 3), np.uint8), ["a red apple"], "2 samples but 1 prompts"),
        (np.zeros((1, 1, 4, 4, 3), np.uint8), ["a cat"], "naming one of"),
    ],
)
def test_bad_frames_are_refused(frames: np.ndarray, prompts: list[str], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        pixel_color(frames, prompts)
    if match != "naming one of":
        with pytest.raises(ValueError, match=match):
            jpeg_compressibility(frames, prompts)


def test_frame_subsets_pick_first_every_k_and_all() -> None:
    assert [str(FrameSubset.parse(t)) for t in ("first", "all", "every-4")] == ["first", "all", "every-4"]
    assert FrameSubset.parse("first").indices(9) == [0]
    assert FrameSubset.parse("every-4").indices(9) == [0, 4, 8]
    assert FrameSubset.parse("every-4").indices(8) == [0, 4]
    assert FrameSubset.parse("all").indices(3) == [0, 1, 2]
    for bad in ("every-0", "every-", "every4", "last", "", "every--1"):
        with pytest.raises(ValueError, match="first, all or every-K"):
            FrameSubset.parse(bad)


def test_a_subset_selects_its_frames_by_index_and_refuses_missing_ones() -> None:
    clip = RNG.integers(0, 256, (2, 3, 4, 4, 3), dtype=np.uint8)  # frames 0, 4, 8 of a 9-frame clip
    held = np.array([0, 4, 8])
    every8 = FrameSubset.parse("every-8").select(clip, held, 9)
    assert np.array_equal(every8, clip[:, [0, 2]])
    assert np.array_equal(FrameSubset.parse("first").select(clip, held, 9), clip[:, :1])
    with pytest.raises(ValueError, match=r"not all in the result \(it holds \[0, 4, 8\]\)"):
        FrameSubset.parse("every-2").select(clip, held, 9)
    with pytest.raises(ValueError, match="3 frames but 2 frame indices"):
        FrameSubset.parse("first").select(clip, held[:2], 9)
    with pytest.raises(ValueError, match="uint8"):
        FrameSubset.parse("first").select(clip.astype(np.float32), held, 9)


def test_a_reward_answer_must_be_one_finite_number_per_sample() -> None:
    frames = np.zeros((2, 1, 2, 2, 3), np.uint8)
    bad = (([1.0], r"got shape \[1\]"), ([1.0, math.nan], "non-finite"), ("ab", "not numbers"))
    for answer, match in bad:
        reward = Reward("odd", "frames", lambda f, p, a=answer: a, ())
        with pytest.raises(ValueError, match=match):
            reward(frames, ["x", "y"])
    assert REWARDS["pixel-color"](frames, ["a red apple"] * 2).dtype == np.float64


MODULE = """
import numpy as np

NAME = "brightness"
PROMPTS = ["a lamp", "a cave"]
FRAMES = "every-2"
LOADED = []  # a weight-bearing scorer would load its weights here, once

def score(frames, prompts):
    LOADED.append(frames.shape)
    return (frames.astype(np.float64).mean(axis=(1, 2, 3, 4)) / 255).tolist()
"""


def test_a_reward_module_from_disk_is_loaded_once_and_scores_frames(tmp_path: Path) -> None:
    path = tmp_path / "my_reward.py"
    path.write_text(MODULE)
    reward = load_reward_module(path)
    assert (reward.name, reward.input, reward.prompts, str(reward.frames)) == (
        "brightness",
        "frames",
        ("a lamp", "a cave"),
        "every-2",
    )
    frames = np.zeros((2, 1, 2, 2, 3), np.uint8)
    frames[1] = 255
    assert reward(frames, ["a lamp"] * 2).tolist() == [0.0, 1.0]
    # Defaults: the file's stem, the first frame, frames input, no prompts.
    bare = tmp_path / "bare.py"
    bare.write_text("def score(frames, prompts):\n    return [0.0] * len(prompts)\n")
    plain = load_reward_module(bare)
    assert (plain.name, plain.input, plain.prompts, str(plain.frames)) == ("bare", "frames", (), "first")


@pytest.mark.parametrize(
    ("source", "match"),
    [
        ("x = 1\n", r"defines no score\(frames, prompts\)"),
        ("raise RuntimeError('no weights at /models/pickscore')\n", "RuntimeError: no weights at"),
        ("def score(f, p): pass\nPROMPTS = 'a cat'\n", "PROMPTS must be a list of strings"),
        ("def score(f, p): pass\nFRAMES = 'last'\n", "FRAMES: a frame subset is first, all or every-K"),
        ("def score(f, p): pass\nINPUT = 'pixels'\n", "INPUT must be 'frames' or 'latents'"),
        ("def score(f, p): pass\nNAME = ''\n", "NAME must be a non-empty string"),
    ],
)
def test_a_bad_reward_module_is_refused_with_what_is_wrong(tmp_path: Path, source: str, match: str) -> None:
    path = tmp_path / "bad.py"
    path.write_text(source)
    with pytest.raises(ValueError, match=match):
        load_reward_module(path)


def test_a_missing_reward_module_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no such file"):
        load_reward_module(tmp_path / "absent.py")


def test_the_trainer_asks_for_the_rewards_frames_and_the_trained_window_only() -> None:
    from train import outputs_request, parse_args

    pixels = parse_args(["--reward", "pixel-color", "--steps", "4", "--timestep-fraction", "0.5"])
    assert pixels.model == "wan21-mini-vae"
    assert outputs_request(pixels) == {"decodeFrames": "first", "keepLatents": {"fromStep": 0, "steps": 2}}
    every4 = parse_args(["--reward", "jpeg-compressibility", "--reward-frames", "every-4"])
    assert outputs_request(every4) == {"decodeFrames": {"every": 4}}
    assert outputs_request(parse_args(["--reward-frames", "all", "--reward", "pixel-color"])) == {
        "decodeFrames": "all"
    }
    # A latents reward on every step asks for neither (the fleet writes RolloutFile v1, as before).
    latents = parse_args([])
    assert (latents.model, latents.reward, outputs_request(latents)) == ("wan21-mini", "color", {})
