"""Delegate backends through both interpreters, with real gcc-built external delegates."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from delegates.fixtures import BACKENDS, backend, build_delegates, bundle, libs, synth_bundle_dir  # noqa: F401
from pydantic import ValidationError

from edge_agent.errors import DelegateUnavailable, InferenceError
from edge_agent.runtime.backend import Backend
from edge_agent.runtime.bundle import Bundle
from edge_agent.runtime.chain import build_chain
from edge_agent.runtime.config import RuntimeConfig
from edge_agent.runtime.delegates import (
    CpuConfig,
    DelegateSetup,
    EdgeTpuConfig,
    ExternalConfig,
    NnapiConfig,
    make_interpreter,
    prepare,
)
from edge_agent.runtime.runner import SegmentRunner


def _run_segment(
    backend: Backend, bundle: Bundle, setup: DelegateSetup, name: str = "block_00"
) -> np.ndarray:
    spec = bundle.segments()[name]
    runner = SegmentRunner(spec, make_interpreter(backend, bundle.path / spec.file, setup, 1))
    x = np.random.default_rng(7).standard_normal((1, *spec.inputs[0]["shape"][1:])).astype(np.float32)
    env = {spec.inputs[0]["name"]: x}
    runner.run(env)
    return np.asarray(env[spec.outputs[0]["name"]])


def test_working_delegate_gets_its_options_and_computes_exactly(
    backend: Backend, bundle: Bundle, libs: dict[str, Path], tmp_path: Path
) -> None:
    cfg = ExternalConfig(
        library=str(libs["good"]),
        options={
            "options_out": str(tmp_path / "opts"),
            "count_out": str(tmp_path / "count"),
            "level": 3,
            "on": True,
        },
    )
    setup = prepare(cfg, backend, bundle, "vx")
    got = _run_segment(backend, bundle, setup)
    ref = _run_segment(backend, bundle, DelegateSetup("cpu", "cpu"))  # same kernels, no plugin
    received = dict(line.split("=", 1) for line in (tmp_path / "opts").read_text().splitlines())
    assert received["level"] == "3" and received["on"] == "true"
    assert int((tmp_path / "count").read_text()) >= 1  # its kernel really ran
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-5)


def test_delegate_whose_create_returns_null_is_unavailable_with_reason(
    backend: Backend, bundle: Bundle, libs: dict[str, Path]
) -> None:
    with pytest.raises(DelegateUnavailable, match="Failed to load delegate") as err:
        prepare(ExternalConfig(library=str(libs["null"])), backend, bundle, "null")
    assert str(libs["null"]) in str(err.value)


def test_delegate_failing_at_invoke_raises_inference_error(
    backend: Backend, bundle: Bundle, libs: dict[str, Path]
) -> None:
    setup = prepare(
        ExternalConfig(library=str(libs["flaky"]), options={"fail_after": 1}), backend, bundle, "f"
    )
    spec = bundle.segments()["block_00"]
    runner = SegmentRunner(spec, make_interpreter(backend, bundle.path / spec.file, setup, 1))
    env = {spec.inputs[0]["name"]: np.zeros((1, *spec.inputs[0]["shape"][1:]), np.float32)}
    runner.run(env)  # the first invoke works
    with pytest.raises(InferenceError, match="device gone"):
        runner.run(env)


def test_missing_library_file_is_named(backend: Backend, bundle: Bundle, tmp_path: Path) -> None:
    with pytest.raises(DelegateUnavailable, match="does not exist"):
        prepare(ExternalConfig(library=str(tmp_path / "nope.so")), backend, bundle, "x")


def test_edgetpu_absent_gives_reason_and_chain_runs_on_cpu(backend: Backend, bundle: Bundle) -> None:
    cfg = RuntimeConfig(backend=backend.name, delegates=[EdgeTpuConfig(device="usb"), CpuConfig()])
    chain = build_chain(bundle, cfg, backend=backend, background_reprobe=False)
    try:
        tpu, cpu = chain.stats()["backends"]
        assert chain.active == "cpu" and cpu["status"] == "active"
        assert tpu["status"] == "unavailable"
        assert "EdgeTPU runtime libedgetpu.so.1 is not installed" in tpu["reason"]
        assert "cannot open shared object file" in tpu["reason"]
        ids = np.ones((1, bundle.manifest["tokenizer"]["max_len"]), np.int32)
        out = chain.run("intents", {"ids": ids})
        assert out["intent_logits"].shape == (1, len(bundle.labels("intents")))
    finally:
        chain.close()


def test_nnapi_is_unavailable_off_android(backend: Backend, bundle: Bundle) -> None:
    if os.path.exists("/system/lib64/libneuralnetworks.so"):
        pytest.fail("this test expects a non-Android host")
    with pytest.raises(DelegateUnavailable, match="NNAPI is an Android API"):
        prepare(NnapiConfig(library="libnnapi_plugin.so"), backend, bundle, "nnapi")


def test_cpu_without_xnnpack_matches_cpu_with_it_closely(backend: Backend, bundle: Bundle) -> None:
    plain = _run_segment(backend, bundle, prepare(CpuConfig(xnnpack=False), backend, bundle, "cpu"))
    fast = _run_segment(backend, bundle, prepare(CpuConfig(xnnpack=True), backend, bundle, "cpu"))
    assert np.max(np.abs(plain - fast)) <= 0.05 * np.max(np.abs(plain))


@pytest.mark.parametrize(
    "raw, field",
    [
        ({"delegates": [{"kind": "gpu"}]}, "delegates.0"),
        ({"delegates": [{"kind": "edgetpu", "device": "firewire"}]}, "device"),
        ({"delegates": [{"kind": "external"}]}, "library"),
        ({"delegates": [{"kind": "cpu", "xnnpak": True}]}, "xnnpak"),
        ({"delegates": []}, "delegates"),
        ({"residency": "auto"}, "weight_budget_mb"),
        ({"cpu": {"quota": 0}}, "quota"),
        ({"cpu": {"affinity": [-1]}}, "affinity"),
        ({"threads": 0}, "threads"),
    ],
)
def test_runtime_config_refuses_bad_values(raw: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        RuntimeConfig.model_validate(raw)


def test_runtime_config_threads_follow_quota() -> None:
    cfg = RuntimeConfig.model_validate({"threads": 4, "cpu": {"quota": 0.5}})
    assert cfg.effective_threads == 1
    assert RuntimeConfig.model_validate({"threads": 4, "cpu": {"quota": 2.5}}).effective_threads == 3
    assert RuntimeConfig.model_validate({"threads": 4}).effective_threads == 4
