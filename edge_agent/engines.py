"""What the handlers run: the bundle, its model on the runtime chain, the recognizer, the log service.

``build_engines`` is what ``edge-agent run`` uses; tests and the demo inject their own ``Engines``.
The model runs through the runtime (docs/runtime.md): the delegate preference chain with fallback,
the residency of the weights and the CPU quota of ``config.runtime``.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import structlog

from edge_agent.bridges.common import HomeHolder
from edge_agent.config import Config
from edge_agent.custom_intents import CustomHolder
from edge_agent.nlu.home import Home
from edge_agent.pipeline.handlers import LogServiceLike, RecognizerLike
from edge_agent.pipeline.pacing import GovernorLike
from edge_agent.store.config import resolve_state_dir

__all__ = [
    "Engines",
    "RuntimeLike",
    "SmallModels",
    "build_engines",
    "bundle_installer",
    "config_home",
    "cpu_governor",
    "open_model",
    "startup_bundle",
]

_log = structlog.get_logger("edge_agent.engines")


class RuntimeLike(Protocol):
    """The model runtime behind the engines (``edge_agent.runtime.chain.ChainRuntime``)."""

    def stats(self) -> dict[str, Any]: ...
    def close(self) -> None: ...


@dataclass
class Engines:
    """What the handlers run: the intent recognizer, the log service (None: logs go to the DLQ),
    the model runtime whose state goes into stats (None: injected engines without one) and the
    CPU governor of ``runtime.cpu.quota`` (None: no quota). ``home_holder`` is the recognizer
    whose home runtime control and HA learning replace (None: a recognizer without a home);
    ``intents`` the bundle's intent names (empty: the schema's); ``custom_holder`` the recognizer
    that ``intents.custom_sentences`` load into (None: custom intents are unavailable). For the SLA
    ladder: ``model``
    is the model the log service labels with (None: it is never swapped) and ``small`` loads the
    bundle's small variant per task (None: the bundle has none, the ladder skips that step)."""

    recognizer: RecognizerLike
    model_id: str
    log_service: LogServiceLike | None = None
    runtime: RuntimeLike | None = None
    governor: GovernorLike | None = None
    home_holder: HomeHolder | None = None
    intents: Sequence[str] = ()
    custom_holder: CustomHolder | None = None
    model: Any = None
    small: SmallModels | None = None


class SmallModels:
    """The bundle's ``small`` variant, one plain CPU model per task, each loaded on first use."""

    def __init__(self, bundle: Any, config: Config) -> None:
        self.bundle = bundle
        self.config = config
        self.calibration: dict[str, Any] = dict(bundle.manifest["variants"]["small"].get("calibration", {}))
        self._models: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __call__(self, task: str) -> Any:
        from edge_agent.runtime.model import Model

        with self._lock:
            if task not in self._models:
                rt, start = self.config.runtime, time.perf_counter()
                self._models[task] = Model(
                    self.bundle, rt.backend, rt.effective_threads, variant="small", tasks=(task,)
                )
                load_ms = round((time.perf_counter() - start) * 1000.0, 1)
                _log.info("sla.small_model_loaded", task=task, model=self.bundle.model_id, load_ms=load_ms)
            return self._models[task]

    def close(self) -> None:
        with self._lock:
            for model in self._models.values():
                model.close()
            self._models.clear()


def config_home(config: Config) -> Home:
    """The home of ``config.home`` (areas, entities) that entity resolution starts from."""
    return Home.from_dict(config.home.model_dump(exclude_none=True), source="config home")


def build_engines(config: Config) -> Engines:
    """Load the bundle, the model (through the runtime chain, under the CPU quota), the recognizer
    and the log service named by ``config``."""
    from edge_agent.nlu.recognizer import IntentRecognizer
    from edge_agent.runtime.bundle import default_bundle_path, load_bundle

    governor = cpu_governor(config)
    bundle = startup_bundle(config, lambda: load_bundle(config.model.bundle or default_bundle_path()))
    runtime, model = open_model(bundle, config, governor)
    recognizer = IntentRecognizer(model, config_home(config))
    return Engines(
        recognizer=recognizer,
        model_id=bundle.model_id,
        log_service=_log_service(config, model),
        runtime=runtime,
        governor=governor,
        home_holder=recognizer,
        intents=recognizer.intents,
        custom_holder=recognizer,
        model=model,
        small=SmallModels(bundle, config) if bundle.has_variant("small") else None,
    )


def cpu_governor(config: Config) -> GovernorLike | None:
    """Affinity and the duty-cycle governor of ``runtime.cpu`` (None without a quota)."""
    from edge_agent.runtime.quota import governor_from_config

    cpu = config.runtime.cpu
    return governor_from_config(cpu.quota, cpu.affinity, burst_s=cpu.burst_ms / 1000)


def open_model(bundle: Any, config: Config, governor: GovernorLike | None) -> tuple[RuntimeLike, Any]:
    """The bundle's ``Model`` on the runtime chain of ``config.runtime``: every delegate of the
    preference list probed against the CPU golden outputs, fallback at run time, transcripts as
    interactive and log lines as background requests of the batching queue."""
    from edge_agent.runtime.chain import open_runtime
    from edge_agent.runtime.model import Model

    rt_cfg = config.runtime
    runtime = open_runtime(bundle, rt_cfg, governor=governor)
    try:
        model = Model(
            bundle, backend=rt_cfg.backend, threads=rt_cfg.effective_threads, executors=runtime.executors
        )
    except BaseException:
        runtime.close()
        raise
    _log.info("app.runtime_open", model=bundle.model_id, **_runtime_summary(runtime.stats()))
    return runtime, model


def _runtime_summary(stats: dict[str, Any]) -> dict[str, Any]:
    unavailable = {b["name"]: b["reason"] for b in stats.get("backends", []) if b.get("reason")}
    return {"active": stats.get("active"), "unavailable": unavailable}


def bundle_installer(config: Config, warm_up: Callable[[Any], Any] | None = None) -> Any:
    """The A/B installer under the state directory, with the trust store when one is configured;
    ``warm_up(bundle) -> model`` replaces the installer's plain CPU warm-up."""
    from edge_agent.runtime.install import BundleInstaller
    from edge_agent.runtime.signing import TrustStore

    rel = config.reliability
    trust = TrustStore.load(rel.bundles.trust_store) if rel.bundles.trust_store is not None else None
    state_dir = resolve_state_dir(rel.state_dir, config.site_id)
    if warm_up is None:
        return BundleInstaller(state_dir, trust)
    return BundleInstaller(state_dir, trust, warm_up=warm_up)


def startup_bundle(config: Config, configured: Callable[[], Any]) -> Any:
    """The installed (A/B) bundle when there is one, else ``model.bundle``; both verified, and signed
    when a trust store is configured. A corrupt active slot falls back to the previous one."""
    from edge_agent.errors import BundleError
    from edge_agent.runtime.bundle import default_bundle_path
    from edge_agent.runtime.signing import load_signed_bundle

    installer = bundle_installer(config)
    try:
        active = installer.load_active()
    except BundleError as exc:
        _log.error("app.active_bundle_invalid", error=str(exc), action="rolling back")
        active = installer.rollback().bundle
    if active is not None:
        return active
    if installer.trust is None:
        return configured()
    return load_signed_bundle(config.model.bundle or default_bundle_path(), installer.trust)


def _log_service(config: Config, model: Any) -> LogServiceLike | None:
    try:
        logs_service = importlib.import_module("edge_agent.logs.service")
    except ModuleNotFoundError as exc:
        if exc.name != "edge_agent.logs.service":
            raise
        _log.warning("app.logs_unavailable", reason="edge_agent.logs.service is not part of this build")
        return None
    factory: Callable[..., LogServiceLike] = logs_service.LogService
    return factory(model=model, config=config.logs)
