"""The PyTorch Wan2.1 VAE decoder: the published parameter list, both checkpoint layouts, the
frame counts, and the three decodes (the original's frame-by-frame cache rule, fixed-shape
caches one latent frame at a time, the whole clip) agreeing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from flowfleet import FlowfleetError
from flowfleet.torch import (
    WAN21_VAE,
    WAN21_VAE_MINI,
    Wan21VaeDecoder,
    WanVaeConfig,
    bind_vae_checkpoint,
    decoder_parameters,
    load_vae_decoder,
    random_vae_weights,
    write_vae_checkpoint,
)
from flowfleet.torch.vae_config import parameter_count
from flowfleet.torch.vae_random_checkpoint import main as write_random_checkpoint

MINI = WAN21_VAE_MINI
ORIGINAL = Path(__file__).resolve().parents[3] / "test/fixtures/wan21-vae-original/tiny.safetensors"


@pytest.fixture(scope="module")
def decoder() -> Wan21VaeDecoder:
    """The mini decoder in float64 (the three decodes agree to rounding there)."""
    return load_vae_decoder(random_vae_weights(MINI, 1), MINI, torch.float64)


def test_the_published_decoder_is_73_3_m_parameters_in_108_tensors() -> None:
    """Counted from shapes, and the module (built on the meta device) has exactly those."""
    params = decoder_parameters(WAN21_VAE)
    assert len(params) == 108
    assert parameter_count(WAN21_VAE) == 73_295_603
    assert 2 * parameter_count(WAN21_VAE) == pytest.approx(147e6, rel=0.005)  # bf16 bytes
    with torch.device("meta"):
        module = Wan21VaeDecoder(WAN21_VAE)
    assert {k: tuple(v.shape) for k, v in module.state_dict().items()} == {p.wan: p.shape for p in params}
    assert len({p.diffusers for p in params}) == 108


def test_published_names_in_both_vocabularies() -> None:
    """Names and shapes pinned from Wan2.1's Decoder3d (flat ``upsamples``: three residual blocks,
    then a Resample, per stage) and diffusers' AutoencoderKLWan (``up_blocks.i.resnets.j``,
    ``up_blocks.i.upsamplers.0``)."""
    by_wan = {p.wan: p for p in decoder_parameters(WAN21_VAE)}
    pinned = {
        "conv2.weight": ("post_quant_conv.weight", (16, 16, 1, 1, 1)),
        "decoder.conv1.weight": ("decoder.conv_in.weight", (384, 16, 3, 3, 3)),
        "decoder.middle.0.residual.0.gamma": ("decoder.mid_block.resnets.0.norm1.gamma", (384, 1, 1, 1)),
        "decoder.middle.1.norm.gamma": ("decoder.mid_block.attentions.0.norm.gamma", (384, 1, 1)),
        "decoder.middle.1.to_qkv.weight": ("decoder.mid_block.attentions.0.to_qkv.weight", (1152, 384, 1, 1)),
        "decoder.middle.2.residual.6.bias": ("decoder.mid_block.resnets.1.conv2.bias", (384,)),
        "decoder.upsamples.3.time_conv.weight": (
            "decoder.up_blocks.0.upsamplers.0.time_conv.weight",
            (768, 384, 3, 1, 1),
        ),
        "decoder.upsamples.3.resample.1.weight": (
            "decoder.up_blocks.0.upsamplers.0.resample.1.weight",
            (192, 384, 3, 3),
        ),
        "decoder.upsamples.4.shortcut.weight": (
            "decoder.up_blocks.1.resnets.0.conv_shortcut.weight",
            (384, 192, 1, 1, 1),
        ),
        "decoder.upsamples.4.residual.2.weight": (
            "decoder.up_blocks.1.resnets.0.conv1.weight",
            (384, 192, 3, 3, 3),
        ),
        "decoder.upsamples.7.time_conv.bias": ("decoder.up_blocks.1.upsamplers.0.time_conv.bias", (768,)),
        "decoder.upsamples.8.residual.2.weight": (
            "decoder.up_blocks.2.resnets.0.conv1.weight",
            (192, 192, 3, 3, 3),
        ),
        "decoder.upsamples.11.resample.1.weight": (
            "decoder.up_blocks.2.upsamplers.0.resample.1.weight",
            (96, 192, 3, 3),
        ),
        "decoder.upsamples.14.residual.6.weight": (
            "decoder.up_blocks.3.resnets.2.conv2.weight",
            (96, 96, 3, 3, 3),
        ),
        "decoder.head.0.gamma": ("decoder.norm_out.gamma", (96, 1, 1, 1)),
        "decoder.head.2.weight": ("decoder.conv_out.weight", (3, 96, 3, 3, 3)),
    }
    for wan, (diffusers, shape) in pinned.items():
        assert (by_wan[wan].diffusers, by_wan[wan].shape) == (diffusers, shape), wan
    assert "decoder.upsamples.11.time_conv.weight" not in by_wan  # the third upsampling is 2D only
    assert not any(".shortcut." in n for n in by_wan if not n.startswith("decoder.upsamples.4."))


@pytest.mark.parametrize("dtype", ["F32", "BF16"])
def test_both_layouts_load_to_the_same_module(tmp_path: Path, dtype: str) -> None:
    """One random weight set written as Wan's file and as a diffusers pipeline's vae/ folder
    (with the encoder's tensors beside, as published) loads to identical modules."""
    torch_dtype = {"F32": torch.float32, "BF16": torch.bfloat16}[dtype]
    weights = random_vae_weights(MINI, 3)
    wan = write_vae_checkpoint(tmp_path / "Wan2.1_VAE.safetensors", "wan", weights, MINI, torch_dtype)
    diffusers = write_vae_checkpoint(tmp_path / "pipeline", "diffusers", weights, MINI, torch_dtype)
    assert diffusers == tmp_path / "pipeline/vae/diffusion_pytorch_model.safetensors"
    config = json.loads((diffusers.parent / "config.json").read_text())
    assert config["_class_name"] == "AutoencoderKLWan" and config["temperal_downsample"] == [
        False,
        True,
        True,
    ]
    assert set(load_file(str(wan))) == {p.wan for p in decoder_parameters(MINI)}
    assert set(load_file(str(diffusers))) == {p.diffusers for p in decoder_parameters(MINI)}
    encoder = {"encoder.conv1.weight": torch.ones(8, 3, 3, 3, 3), "conv1.weight": torch.ones(8, 8, 1, 1, 1)}
    with_encoder = tmp_path / "with-encoder.safetensors"
    save_file({**load_file(str(diffusers)), **encoder, "quant_conv.bias": torch.ones(8)}, str(with_encoder))

    modules = [load_vae_decoder(p, MINI) for p in (wan, diffusers, with_encoder, wan.read_bytes())]
    states = [m.state_dict() for m in modules]
    for name, value in weights.items():
        expected = value.to(torch_dtype).to(torch.float32)
        assert all(torch.equal(s[name], expected) for s in states), name
    latent = torch.randn(1, MINI.z_dim, 2, 2, 3, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        frames = [m.decode(latent) for m in modules[:2]]
    assert torch.equal(frames[0], frames[1])


def test_a_checkpoint_that_does_not_fit_is_refused_listing_every_problem() -> None:
    params = decoder_parameters(MINI)
    weights = {p.wan: torch.zeros(p.shape) for p in params}
    weights.pop("decoder.head.0.gamma")
    weights["decoder.conv1.weight"] = torch.zeros(1, 2, 3)
    twin = "decoder.up_blocks.0.resnets.0.norm1.gamma"  # diffusers' name of a tensor given by Wan's too
    weights[twin] = torch.zeros(weights["decoder.upsamples.0.residual.0.gamma"].shape)
    weights["decoder.upsamples.99.time_conv.weight"] = torch.zeros(1)
    with pytest.raises(FlowfleetError) as caught:
        bind_vae_checkpoint(MINI, weights)
    err = caught.value
    assert err.code == "MODEL_WEIGHTS_MISMATCH"
    assert err.details["missing"] == ["decoder.head.0.gamma"]
    unexpected = err.details["unexpected"]
    assert len(unexpected) == 2 and "decoder.upsamples.99.time_conv.weight" in unexpected
    assert {twin, "decoder.upsamples.0.residual.0.gamma"} & set(unexpected)
    assert err.details["wrongShape"] == [
        {
            "name": "decoder.conv1.weight",
            "source": "decoder.conv1.weight",
            "expected": [32, 4, 3, 3, 3],
            "actual": [1, 2, 3],
        }
    ]


@pytest.mark.parametrize(("temporal", "per_frame"), [((True, True, False), 4), ((False, True, False), 2)])
def test_t_latent_frames_decode_to_one_plus_k_times_t_minus_one(
    temporal: tuple[bool, ...], per_frame: int
) -> None:
    config = MINI.with_overrides(temporal_upsample=temporal)
    module = load_vae_decoder(random_vae_weights(config, 2), config)
    assert config.temporal_factor == per_frame
    with torch.no_grad():
        for t in (1, 3):
            latent = torch.randn(2, config.z_dim, t, 1, 2)
            frames = module.decode(latent)
            assert (
                frames.shape == (2, 3, 1 + per_frame * (t - 1), 8, 16) == (2, 3, config.frames_for(t), 8, 16)
            )
            assert frames.abs().max() <= 1.0


def test_the_three_decodes_agree(decoder: Wan21VaeDecoder) -> None:
    """Original cache rule, fixed caches stepped frame by frame, and the whole clip (unclamped)."""
    latent = torch.randn(
        1, MINI.z_dim, 3, 2, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(4)
    )
    with torch.no_grad():
        original = decoder.decode(latent, clamp=False)
        clip = decoder.decode_clip(latent, clamp=False)
        cache, steps = None, []
        for i in range(latent.shape[2]):
            frames, cache = decoder.decode_step(latent[:, :, i : i + 1], cache, clamp=False)
            steps.append(frames)
    assert [s.shape[2] for s in steps] == [1, 4, 4]
    assert original.std() > 0.1 and (original.abs() > 1).any()  # not degenerate, and the clamp matters
    torch.testing.assert_close(clip, original, rtol=0, atol=1e-12)
    torch.testing.assert_close(torch.cat(steps, dim=2), original, rtol=0, atol=1e-12)
    assert torch.equal(decoder.decode(latent), original.clamp(-1, 1))


def test_the_decoder_matches_the_original_code() -> None:
    """Frames the original Wan2.1 code decoded (see the fixture's README), from the same weights."""
    vectors = load_file(str(ORIGINAL))
    with safe_open(str(ORIGINAL), "pt") as f:
        config = WanVaeConfig.from_ts(json.loads(f.metadata()["config"]))
    assert config.num_res_blocks == 2 and len(decoder_parameters(config)) == 110
    latent, expected = vectors.pop("latent").double(), vectors.pop("frames").double()
    module = load_vae_decoder(vectors, config, torch.float64)
    with torch.no_grad():
        frames = module.decode(latent, clamp=False)
    assert expected.abs().max() > 1  # the unclamped output
    torch.testing.assert_close(frames, expected, rtol=0, atol=1e-6)


def test_decoding_is_causal(decoder: Wan21VaeDecoder) -> None:
    """The frames of the first k latent frames do not depend on later ones."""
    latent = torch.randn(1, MINI.z_dim, 3, 2, 2, dtype=torch.float64)
    changed = latent.clone()
    changed[:, :, 2] += 1
    with torch.no_grad():
        a, b = decoder.decode_clip(latent), decoder.decode_clip(changed)
    assert torch.equal(a[:, :, :5], b[:, :, :5]) and not torch.equal(a[:, :, 5:], b[:, :, 5:])


def test_the_latent_is_denormalised_per_channel_before_decoding(decoder: Wan21VaeDecoder) -> None:
    """decode(z) = the same decoder with mean 0, std 1 on z·std + mean."""
    plain_config = MINI.with_overrides(latents_mean=[0.0] * MINI.z_dim, latents_std=[1.0] * MINI.z_dim)
    plain = Wan21VaeDecoder(plain_config).double()
    plain.load_state_dict(decoder.state_dict())
    latent = torch.randn(1, MINI.z_dim, 2, 2, 2, dtype=torch.float64)
    mean = torch.tensor(MINI.latents_mean, dtype=torch.float64).view(1, -1, 1, 1, 1)
    std = torch.tensor(MINI.latents_std, dtype=torch.float64).view(1, -1, 1, 1, 1)
    with torch.no_grad():
        torch.testing.assert_close(
            decoder.decode_clip(latent), plain.decode_clip(latent * std + mean), rtol=0, atol=1e-13
        )
        assert not torch.allclose(decoder.decode_clip(latent), plain.decode_clip(latent))


def test_bad_latents_and_caches_are_refused(decoder: Wan21VaeDecoder) -> None:
    frame = torch.randn(1, MINI.z_dim, 1, 2, 2, dtype=torch.float64)
    with torch.no_grad():
        _, cache = decoder.decode_step(frame)
        for bad in (torch.randn(1, MINI.z_dim + 1, 1, 2, 2), torch.randn(MINI.z_dim, 1, 2, 2)):
            with pytest.raises(FlowfleetError, match="MODEL_INPUT_INVALID"):
                decoder.decode(bad)
        with pytest.raises(FlowfleetError, match="one latent frame"):
            decoder.decode_step(torch.randn(1, MINI.z_dim, 2, 2, 2))
        with pytest.raises(FlowfleetError, match="too few cache tensors"):
            decoder.decode_step(frame, type(cache)(cache.tensors[:-1]))
        with pytest.raises(FlowfleetError, match="too many cache tensors"):
            decoder.decode_step(frame, type(cache)((*cache.tensors, cache.tensors[0])))
        with pytest.raises(FlowfleetError, match="does not fit its layer"):
            decoder.decode_step(frame, type(cache)((cache.tensors[1], *cache.tensors[1:])))
        with pytest.raises(FlowfleetError, match="does not fit its layer"):
            decoder.decode_step(torch.randn(1, MINI.z_dim, 1, 2, 4, dtype=torch.float64), cache)


def test_the_random_checkpoint_script_writes_a_loadable_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "pipe"
    assert (
        write_random_checkpoint(
            ["--layout", "diffusers", "--out", str(out), "--config", MINI.name, "--seed", "5"]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["tensors"] == len(decoder_parameters(MINI))
    module = load_vae_decoder(report["path"], MINI)
    expected = random_vae_weights(MINI, 5)["decoder.conv1.weight"].to(torch.bfloat16).float()
    assert torch.equal(module.state_dict()["decoder.conv1.weight"], expected)
