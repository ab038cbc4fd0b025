"""The modules' state_dicts are the fleet's weight sets: the same names and shapes as the card's
``parameterShapes``/``textEncoderParameterShapes``, strict loading, and ``state_dict()`` blobs
(F32, F16, BF16) that the fleet's own weight check accepts and decodes to the same values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors.torch import load_file, save_file
from torch_cases import ForwardCase, forward_task
from torch_fleet import JobResult, figures, run_job, save_weights

from flowfleet.torch import (
    WAN21_1_3B,
    WAN21_MINI,
    Wan21Config,
    Wan21DiT,
    Wan21TextEncoder,
    load_fleet_weights,
)

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
CUSTOM = WAN21_MINI.with_overrides(in_channels=3, patch=(2, 2, 2), dim=96, heads=6, layers=3)


def _shapes(module: torch.nn.Module) -> dict[str, list[int]]:
    return {name: list(t.shape) for name, t in module.state_dict().items()}


@pytest.mark.parametrize("config", [WAN21_MINI, CUSTOM, WAN21_1_3B], ids=lambda c: c.name)
def test_state_dict_names_and_shapes_are_the_cards(config: Wan21Config, tmp_path: Path) -> None:
    """Exactly the TS parameter lists (1.3B built on the meta device: shapes only)."""
    ts = run_job(config.to_ts(), [{"op": "shapes"}], tmp_path)
    assert Wan21Config.from_ts(ts.config) == config
    with torch.device("meta"):
        dit, te = Wan21DiT(config), Wan21TextEncoder(config)
    for module, component in ((dit, "dit"), (te, "text_encoder")):
        expected = {name: dims for name, dims in ts.results[0][component]}
        assert _shapes(module) == expected
        assert len(module.state_dict()) == len(expected)


def test_strict_loading_refuses_a_missing_an_extra_and_a_misshapen_key() -> None:
    dit = Wan21DiT()
    state = Wan21DiT().state_dict()
    dit.load_state_dict(state, strict=True)
    missing = {k: v for k, v in state.items() if k != "blocks.1.modulation"}
    with pytest.raises(RuntimeError, match=r"Missing key\(s\).*blocks\.1\.modulation"):
        dit.load_state_dict(missing, strict=True)
    with pytest.raises(RuntimeError, match=r"Unexpected key\(s\).*blocks\.2\.modulation"):
        dit.load_state_dict({**state, "blocks.2.modulation": state["blocks.1.modulation"]})
    with pytest.raises(RuntimeError, match=r"size mismatch for head\.head\.weight"):
        dit.load_state_dict({**state, "head.head.weight": torch.zeros(8, 128)})
    te_state = Wan21TextEncoder().state_dict()
    with pytest.raises(RuntimeError, match=r"Missing key\(s\).*text_encoder\.pos_embedding"):
        Wan21TextEncoder().load_state_dict(
            {k: v for k, v in te_state.items() if k != "text_encoder.pos_embedding"}
        )
    unprefixed = {k.removeprefix("text_encoder."): v for k, v in te_state.items()}
    with pytest.raises(RuntimeError, match=r"Missing key\(s\)"):
        Wan21TextEncoder().load_state_dict(unprefixed)


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """state_dict() blobs of both modules in every dtype, two broken blobs, and forwards on the
    F16/BF16 blobs, all through the fleet in one job."""
    workdir = tmp_path_factory.mktemp("round-trip")
    torch.manual_seed(3)
    modules = {"dit": Wan21DiT(), "text_encoder": Wan21TextEncoder()}
    tasks: list[dict[str, Any]] = []
    paths: dict[str, Path] = {}
    for dtype_name, dtype in DTYPES.items():
        for component, module in modules.items():
            path = save_weights(module.state_dict(), workdir / f"{component}.{dtype_name}", dtype)
            paths[f"{component}.{dtype_name}"] = path
            tasks.append({"op": "check", "component": component, "weights": str(path)})
    state = modules["dit"].state_dict()
    extra = workdir / "extra"
    save_file({**state, "blocks.9.modulation": state["blocks.0.modulation"].clone()}, str(extra))
    missing = workdir / "missing"
    save_file({k: v for k, v in state.items() if k != "head.modulation"}, str(missing))
    tasks += [{"op": "check", "component": "dit", "weights": str(p)} for p in (extra, missing)]
    case = ForwardCase("", [2, 4, 2, 8, 8], [999.0, 3.25], ["a", "b"], 5)
    inputs = case.write_inputs(WAN21_MINI, workdir / "inputs")
    for name in ("F16", "BF16"):
        blobs = (paths[f"dit.{name}"], paths[f"text_encoder.{name}"])
        tasks.append(forward_task(*blobs, workdir / "inputs", workdir / f"forward.{name}"))
    job: JobResult = run_job("wan21-mini", tasks, workdir)
    return {"job": job, "modules": modules, "paths": paths, "inputs": inputs, "dir": workdir}


def test_the_fleet_accepts_state_dict_blobs_in_every_dtype(round_trip: dict[str, Any]) -> None:
    results = round_trip["job"].results
    assert results[: 2 * len(DTYPES)] == [{"ok": True}] * (2 * len(DTYPES))


def test_the_fleet_refuses_an_extra_and_a_missing_tensor(round_trip: dict[str, Any]) -> None:
    extra, missing = round_trip["job"].results[2 * len(DTYPES) : 2 * len(DTYPES) + 2]
    assert extra["ok"] is False and extra["code"] == "MODEL_WEIGHTS_MISMATCH"
    assert extra["details"]["unexpected"] == ["blocks.9.modulation"]
    assert missing["code"] == "MODEL_WEIGHTS_MISMATCH"
    assert missing["details"]["missing"] == ["head.modulation"]
    with pytest.raises(RuntimeError, match="head.modulation"):
        load_fleet_weights(Wan21DiT(), round_trip["dir"] / "missing")


@pytest.mark.parametrize("name", list(DTYPES))
def test_blobs_load_back_to_the_cast_values(round_trip: dict[str, Any], name: str) -> None:
    """From the file and from its bytes (as the fleet serves a blob)."""
    for component, module in round_trip["modules"].items():
        path = round_trip["paths"][f"{component}.{name}"]
        for source in (path, path.read_bytes()):
            fresh = load_fleet_weights(type(module)(), source).state_dict()
            for key, value in module.state_dict().items():
                expected = value.to(DTYPES[name]).to(torch.float32)
                assert fresh[key].dtype == torch.float32
                assert torch.equal(fresh[key], expected), key


@pytest.mark.parametrize("name", ["F16", "BF16"])
def test_the_fleet_decodes_half_blobs_as_torch_widens_them(round_trip: dict[str, Any], name: str) -> None:
    """ort-cpu forwards on the fleet-decoded half blobs match torch on the same blobs."""
    paths, inputs = round_trip["paths"], round_trip["inputs"]
    out = load_file(str(round_trip["dir"] / f"forward.{name}"))
    tolerance = round_trip["job"].tolerance
    dit = load_fleet_weights(Wan21DiT(), paths[f"dit.{name}"])
    te = load_fleet_weights(Wan21TextEncoder(), paths[f"text_encoder.{name}"])
    with torch.no_grad():
        context = figures(te(inputs["tokens"]), out["context"])
        v = figures(dit(inputs["latent"], inputs["timestep"], inputs["context"]), out["velocity"])
    print(f"\n{name} blobs: context {context}; velocity {v}")
    assert context.passes(tolerance) and v.passes(tolerance), (context, v)
