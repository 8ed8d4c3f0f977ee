"""The backend chain: probe, fall back mid-run without losing requests, re-probe and switch back."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from delegates.fixtures import BACKENDS, backend, build_delegates, bundle, libs, synth_bundle_dir  # noqa: F401

from edge_agent.errors import InferenceError
from edge_agent.runtime.backend import Backend
from edge_agent.runtime.bundle import Bundle
from edge_agent.runtime.chain import DelegateChain, build_chain, compare_outputs, open_runtime
from edge_agent.runtime.config import RuntimeConfig
from edge_agent.runtime.delegates import CpuConfig, ExternalConfig


def _ids(bundle: Bundle, n: int, seed: int = 3) -> np.ndarray:
    return (
        np.random.default_rng(seed)
        .integers(1, 200, size=(n, bundle.manifest["tokenizer"]["max_len"]))
        .astype(np.int32)
    )


def _cpu_reference(bundle: Bundle, backend: Backend, ids: np.ndarray, residency: str) -> list[np.ndarray]:
    cfg = RuntimeConfig(backend=backend.name, residency=residency, delegates=[CpuConfig()])
    chain = build_chain(bundle, cfg, backend=backend, background_reprobe=False)
    try:
        return [chain.run("intents", {"ids": ids[i : i + 1]})["intent_logits"] for i in range(len(ids))]
    finally:
        chain.close()


@pytest.mark.parametrize("residency", ["resident", "stream"])
def test_failure_mid_run_loses_no_request_and_shows_in_stats(
    backend: Backend, bundle: Bundle, libs: dict[str, Path], residency: str
) -> None:
    ids = _ids(bundle, 24)
    expected = _cpu_reference(bundle, backend, ids, residency)
    flaky = ExternalConfig(name="npu", library=str(libs["flaky"]), options={"fail_after": 40})
    cfg = RuntimeConfig(
        backend=backend.name, residency=residency, max_batch=4, delegates=[flaky, CpuConfig()]
    )
    rt = open_runtime(bundle, cfg, backend=backend)
    try:
        assert rt.chain.active == "npu"
        futures = [rt.queue.submit("intents", {"ids": ids[i : i + 1]}) for i in range(len(ids))]
        results = [f.result(timeout=60)["intent_logits"] for f in futures]
        stats = rt.stats()
    finally:
        rt.close()
    assert len(results) == len(ids)
    for got, want in zip(results, expected, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)
    assert stats["active"] == "cpu"
    assert stats["failovers"] == 1 and stats["retried_requests"] >= 1
    assert stats["served"] == len(ids)
    npu = stats["backends"][0]
    assert npu["status"] == "failed" and "device gone" in npu["reason"] and npu["failures"] == 1
    assert [(s["from"], s["to"]) for s in stats["switches"]] == [(None, "npu"), ("npu", "cpu")]


def test_reprobe_switches_back_when_the_device_returns(
    backend: Backend, bundle: Bundle, libs: dict[str, Path], tmp_path: Path
) -> None:
    unplugged = tmp_path / "unplugged"
    flaky = ExternalConfig(name="npu", library=str(libs["flaky"]), options={"fail_flag": str(unplugged)})
    cfg = RuntimeConfig(backend=backend.name, delegates=[flaky, CpuConfig()], reprobe_interval_s=3600)
    chain = build_chain(bundle, cfg, backend=backend, background_reprobe=False)
    ids = _ids(bundle, 1)
    try:
        before = chain.run("intents", {"ids": ids})["intent_logits"]
        unplugged.touch()
        during = chain.run("intents", {"ids": ids})["intent_logits"]
        assert chain.active == "cpu"
        assert chain.reprobe() == "cpu"  # still unplugged: the probe fails, nothing changes
        assert chain.stats()["backends"][0]["status"] == "failed"
        unplugged.unlink()
        assert chain.reprobe() == "npu"
        after = chain.run("intents", {"ids": ids})["intent_logits"]
        stats = chain.stats()
    finally:
        chain.close()
    np.testing.assert_allclose(during, before, atol=1e-5)
    np.testing.assert_allclose(after, before, atol=1e-5)
    assert [s["to"] for s in stats["switches"]] == ["npu", "cpu", "npu"]
    assert stats["backends"][0]["status"] == "active" and stats["backends"][1]["status"] == "standby"


def test_periodic_reprobe_runs_in_background(
    backend: Backend, bundle: Bundle, libs: dict[str, Path], tmp_path: Path
) -> None:
    unplugged = tmp_path / "unplugged"
    flaky = ExternalConfig(name="npu", library=str(libs["flaky"]), options={"fail_flag": str(unplugged)})
    cfg = RuntimeConfig(backend=backend.name, delegates=[flaky, CpuConfig()], reprobe_interval_s=0.01)
    chain = build_chain(bundle, cfg, backend=backend)
    ids = _ids(bundle, 1)
    try:
        unplugged.touch()
        chain.run("intents", {"ids": ids})
        assert chain.stats()["backends"][0]["status"] == "failed"
        unplugged.unlink()
        for _ in range(200):  # each run may start a background re-probe once the interval passed
            chain.run("intents", {"ids": ids})
            if chain.active == "npu":
                break
            threading.Event().wait(0.02)
        assert chain.active == "npu"
    finally:
        chain.close()


def test_numerically_wrong_delegate_fails_warmup(
    backend: Backend, bundle: Bundle, libs: dict[str, Path]
) -> None:
    wrong = ExternalConfig(name="bad", library=str(libs["good"]), options={"bias": 5.0})
    cfg = RuntimeConfig(backend=backend.name, delegates=[wrong, CpuConfig()])
    chain = build_chain(bundle, cfg, backend=backend, background_reprobe=False)
    try:
        bad = chain.stats()["backends"][0]
        assert chain.active == "cpu"
        assert bad["status"] == "unavailable" and "differs from CPU golden" in bad["reason"]
    finally:
        chain.close()


def test_no_working_backend_raises_with_every_reason(
    backend: Backend, bundle: Bundle, libs: dict[str, Path]
) -> None:
    cfg = RuntimeConfig(
        backend=backend.name,
        delegates=[ExternalConfig(library=str(libs["null"])), {"kind": "edgetpu"}, CpuConfig()],
    )
    chain = build_chain(bundle, cfg, backend=backend, background_reprobe=False)
    only_broken = DelegateChain(chain._candidates[:2], chain._golden, background_reprobe=False)
    chain.close()
    with pytest.raises(InferenceError, match=r"(?s)libnull_delegate\.so.*no device present.*edgetpu"):
        only_broken.run("intents", {"ids": _ids(bundle, 1)})


def test_compare_outputs_reports_what_differs() -> None:
    ref = {"a": np.array([[1.0, -2.0]], np.float32)}
    assert compare_outputs(ref, {"a": np.array([[1.05, -2.0]])}, 0.05) is None
    assert "differs" in (compare_outputs(ref, {"a": np.array([[1.5, -2.0]])}, 0.05) or "")
    assert "shape" in (compare_outputs(ref, {"a": np.zeros((2, 2))}, 0.05) or "")
    assert "no 'a'" in (compare_outputs(ref, {}, 0.05) or "")
    assert "finite" in (compare_outputs(ref, {"a": np.array([[np.nan, 0.0]])}, 0.05) or "")
