"""A lean service: what `edge-agent run` with the default config loads, in a fresh interpreter
with the real bundle and runtime (features that are off load nothing of theirs)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import paho.mqtt.client as paho
import pytest
import yaml
from broker import AgentProcess, Collector, TestBroker
from conftest import agent_config

from edge_agent.commands._lean import DEFERRED, LAZY_NUMPY

REPO = Path(__file__).resolve().parent.parent

# the start of `edge-agent run` (commands/run.py) up to a built Agent, then what it loaded
_SCRIPT = """
import json, sys
from edge_agent.commands._lean import DEFERRED, LAZY_NUMPY, lean_start
lean_start(openssl=False, malloc_arenas=2)
import edge_agent.app
from edge_agent.config import load
from edge_agent.engines import build_engines
config = load(sys.argv[1])
agent = edge_agent.app.Agent(config, build_engines(config))
loaded = {name: type(module).__name__ for name, module in sys.modules.items() if module is not None}
lazy = {name: loaded.get(name) for name in LAZY_NUMPY + DEFERRED}
openssl = sorted(name for name in ("_ssl", "_hashlib") if sys.modules.get(name))
import numpy
value = int(numpy.random.default_rng(0).integers(1, 2))  # a deferred module runs at first use
import asyncio
from asyncio.subprocess import Process  # a submodule of a deferred package: the package runs first
async def answer():
    return 42
print(json.dumps({"modules": sorted(loaded), "lazy": lazy, "random_works": value == 1,
                  "asyncio_works": asyncio.run(answer()) == 42 and asyncio.subprocess.Process is Process
                  and sys.modules["asyncio.events"] is asyncio.events,
                  "rich": "rich" in sys.modules and sys.modules["rich"] is None,
                  "openssl": openssl}))
"""


def _loaded(tmp_path: Path, **sections: dict[str, object]) -> dict[str, object]:
    config = yaml.safe_load((REPO / "configs" / "default.yaml").read_text(encoding="utf-8"))
    config["reliability"]["state_dir"] = str(tmp_path / "state")
    for name, values in sections.items():
        config[name].update(values)
    path = tmp_path / "agent.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("CREDENTIALS_DIRECTORY", "MALLOC_ARENA_MAX")}
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(path)],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_the_default_service_loads_no_feature_that_is_off(tmp_path: Path) -> None:
    result = _loaded(tmp_path)
    modules = set(result["modules"])  # type: ignore[arg-type]
    off = [
        "cryptography",  # bundle signatures: no trust store
        "wyoming",  # the Wyoming server
        "edge_agent.bridges.wyoming",
        "edge_agent.bridges.hermes",
        "edge_agent.bridges.control",
        "edge_agent.bridges.homeassistant",
        "edge_agent.messages.discovery",
        "ai_edge_litert.interpreter",  # the CPU path compiles through LiteRT's C API
    ]
    assert not [name for name in off if name in modules or any(m.startswith(name + ".") for m in modules)]
    assert {"edge_agent.runtime.litert_c", "edge_agent.logs.service", "sqlite3"} <= modules
    assert result["lazy"] == dict.fromkeys(LAZY_NUMPY + DEFERRED, "_DeferredModule")
    assert {"numpy.random", "asyncio", "ssl"} <= set(LAZY_NUMPY + DEFERRED)
    assert result["random_works"] is True
    assert result["asyncio_works"] is True
    assert result["rich"] is True  # kept out on purpose, not missing by chance
    assert result["openssl"] == []  # neither ssl's nor hashlib's OpenSSL


def test_a_feature_that_is_on_is_loaded(tmp_path: Path) -> None:
    result = _loaded(tmp_path, hermes={"enabled": True}, control={"enabled": True})
    modules = set(result["modules"])  # type: ignore[arg-type]
    assert {"edge_agent.bridges.hermes", "edge_agent.bridges.control"} <= modules
    assert "edge_agent.bridges.homeassistant" not in modules and "wyoming" not in modules


def _openssl_mapped(pid: int) -> list[str]:
    """OpenSSL's libraries in a live process's memory map."""
    maps = Path(f"/proc/{pid}/maps").read_text(encoding="utf-8")
    return sorted(
        {line.split()[-1] for line in maps.splitlines() if re.search(r"/lib(ssl|crypto)[.-]", line)}
    )


def _serve(
    broker: TestBroker,
    tmp_path: Path,
    agents: list[AgentProcess],
    collect: Collector,
    site: str,
    client: paho.Client,
    *,
    tls: bool,
) -> AgentProcess:
    """`edge-agent run` answering 30 transcripts and 30 log lines (QoS 1) on a live broker."""
    config = agent_config(broker, site, mqtt=broker.agent_mqtt(tls=tls))
    agent = AgentProcess(config, tmp_path).start()
    agents.append(agent)
    collect.wait_for(lambda _m: b"online" in collect.on(f"edge/{site}/status"), timeout=90)
    for i in range(30):
        client.publish(
            f"edge/{site}/transcript", json.dumps({"id": f"t{i}", "text": "turn on the light"}), qos=1
        )
        client.publish(f"edge/{site}/logs/kernel", f"kernel: eth0: link up after {i} s", qos=1)
    collect.wait_for(lambda _m: len(collect.on(f"edge/{site}/intent")) >= 30, timeout=60)
    assert agent.proc is not None and agent.proc.poll() is None
    return agent


def test_a_plain_service_never_loads_openssl(
    broker: TestBroker,
    tmp_path: Path,
    agents: list[AgentProcess],
    collect: Collector,
    site: str,
    client: paho.Client,
) -> None:
    """paho's socket reads name ssl's exceptions at each would-block; the agent's client does not,
    so the deferred ssl never runs without TLS, under traffic too."""
    agent = _serve(broker, tmp_path, agents, collect, site, client, tls=False)
    assert agent.proc is not None
    assert _openssl_mapped(agent.proc.pid) == []
    assert agent.terminate() == 0


def test_a_tls_service_loads_openssl_for_its_connection(
    broker: TestBroker,
    tmp_path: Path,
    agents: list[AgentProcess],
    collect: Collector,
    site: str,
    client: paho.Client,
) -> None:
    agent = _serve(broker, tmp_path, agents, collect, site, client, tls=True)
    assert agent.proc is not None
    assert any("libssl" in path for path in _openssl_mapped(agent.proc.pid))
    assert agent.terminate() == 0


def test_a_deferred_module_runs_once_at_first_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from edge_agent.commands._lean import _DeferringFinder

    runs = tmp_path / "runs.txt"
    (tmp_path / "lean_pkg").mkdir()
    (tmp_path / "lean_pkg" / "__init__.py").write_text(
        f"open({str(runs)!r}, 'a').write('pkg ')\nfrom . import sub\nNAME = 'pkg'\n", encoding="utf-8"
    )
    (tmp_path / "lean_pkg" / "sub.py").write_text(
        f"open({str(runs)!r}, 'a').write('sub ')\nVALUE = 7\n", encoding="utf-8"
    )
    (tmp_path / "lean_bad.py").write_text("raise RuntimeError('broken at import')\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "meta_path", [_DeferringFinder(["lean_pkg", "lean_bad"]), *sys.meta_path])
    for name in ("lean_pkg", "lean_pkg.sub", "lean_bad"):
        monkeypatch.delitem(sys.modules, name, raising=False)

    import lean_pkg  # type: ignore[import-not-found]
    import lean_pkg as again  # type: ignore[import-not-found]

    assert again is lean_pkg and type(lean_pkg).__name__ == "_DeferredModule" and not runs.exists()
    from lean_pkg.sub import VALUE  # type: ignore[import-not-found]

    # the package ran before its submodule, each once, and the submodule is one module
    assert VALUE == 7 and runs.read_text(encoding="utf-8") == "pkg sub "
    assert sys.modules["lean_pkg.sub"] is lean_pkg.sub and lean_pkg.NAME == "pkg"
    assert type(lean_pkg) is type(sys)

    import lean_bad  # type: ignore[import-not-found]

    with pytest.raises(RuntimeError, match="broken at import"):
        _ = lean_bad.anything
    assert "lean_bad" not in sys.modules  # as after a failed import
