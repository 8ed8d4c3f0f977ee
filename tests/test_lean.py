"""A lean service: what `edge-agent run` with the default config loads, in a fresh interpreter
with the real bundle and runtime (features that are off load nothing of theirs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent

# the start of `edge-agent run` (commands/run.py) up to a built Agent, then what it loaded
_SCRIPT = """
import json, sys
from edge_agent.commands._lean import lean_start
lean_start(malloc_arenas=2)
import edge_agent.app
from edge_agent.config import load
from edge_agent.engines import build_engines
config = load(sys.argv[1])
agent = edge_agent.app.Agent(config, build_engines(config))
loaded = {name: type(module).__name__ for name, module in sys.modules.items() if module is not None}
lazy = {name: loaded.get(name) for name in ("numpy.random", "numpy.ma", "numpy.polynomial", "numpy.fft")}
import numpy
value = int(numpy.random.default_rng(0).integers(1, 2))  # a lazy module loads at first use
print(json.dumps({"modules": sorted(loaded), "lazy": lazy, "random_works": value == 1,
                  "rich": "rich" in sys.modules and sys.modules["rich"] is None}))
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
    assert result["lazy"] == dict.fromkeys(
        ("numpy.random", "numpy.ma", "numpy.polynomial", "numpy.fft"), "_LazyModule"
    )
    assert result["random_works"] is True
    assert result["rich"] is True  # kept out on purpose, not missing by chance


def test_a_feature_that_is_on_is_loaded(tmp_path: Path) -> None:
    result = _loaded(tmp_path, hermes={"enabled": True}, control={"enabled": True})
    modules = set(result["modules"])  # type: ignore[arg-type]
    assert {"edge_agent.bridges.hermes", "edge_agent.bridges.control"} <= modules
    assert "edge_agent.bridges.homeassistant" not in modules and "wyoming" not in modules
