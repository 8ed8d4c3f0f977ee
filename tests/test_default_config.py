"""configs/default.yaml lists every config key with its default: it is what `edge-fw default-config`
writes from the models, every key of the models is in it (set, or commented where its section is
absent by default or it belongs to a list item), and every value set is the model's default."""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from edge_agent.config import Config
from firmware_tools.commands.default_config import render

REPO = Path(__file__).resolve().parent.parent
DEFAULT_YAML = REPO / "configs" / "default.yaml"


def test_the_file_is_what_the_generator_writes() -> None:
    assert DEFAULT_YAML.read_text(encoding="utf-8") == render(), (
        "configs/default.yaml is stale: run `edge-fw default-config` (or python -m firmware_tools ...)"
    )


def _leaves(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Dotted key -> value; a mapping is walked into, anything else (lists included) is a leaf."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(_leaves(value, path + "."))
        else:
            out[path] = value
    return out


def test_every_key_set_by_default_is_in_the_file_with_its_default() -> None:
    written = _leaves(yaml.safe_load(DEFAULT_YAML.read_text(encoding="utf-8")))
    commented = {k for k, v in _leaves(Config().model_dump(mode="json")).items() if v is None}
    commented &= _absent_sections(Config).keys()  # null sections (mqtt.tls): see the next test
    defaults = {k: v for k, v in _leaves(Config().model_dump(mode="json")).items() if k not in commented}
    assert sorted(defaults.keys() - written.keys()) == []
    assert sorted(written.keys() - defaults.keys()) == []
    assert {k: v for k, v in written.items() if defaults[k] != v} == {}
    # a sample by hand, so that a model and the file cannot drift together unnoticed
    assert written["logs.window_s"] == 60.0 and written["wyoming.port"] == 10500
    assert written["runtime.delegates"] == [
        {"kind": "cpu", "name": None, "xnnpack": True, "threads": None, "xnnpack_weight_cache": "auto"}
    ]
    assert written["sla.thermal_path"] == "/sys/class/thermal/thermal_zone0/temp"


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models(arg)]


def _absent_sections(model: type[BaseModel], prefix: str = "") -> dict[str, list[type[BaseModel]]]:
    """Dotted key -> its models, for the fields whose default holds no instance of them:
    a section that is null by default, the items of a list (and a list's other kinds)."""
    out: dict[str, list[type[BaseModel]]] = {}
    for key, field in model.model_fields.items():
        path = f"{prefix}{key}"
        default = None if field.is_required() else field.get_default(call_default_factory=True)
        if isinstance(default, BaseModel):
            out.update(_absent_sections(type(default), path + "."))
            continue
        present = {type(item) for item in default} if isinstance(default, list) else set()
        missing = [m for m in _models(field.annotation) if m not in present]
        if missing:
            out[path] = missing
    return out


def _block(lines: list[str], dotted: str) -> list[str]:
    """The lines under ``dotted``'s key (set or commented), up to the next key at its depth."""
    *parents, key = dotted.split(".")
    start = 0
    for depth, part in enumerate([*parents, key]):
        pattern = re.compile(rf"^{'  ' * depth}(# )?{re.escape(part)}:")
        start = next(i for i in range(start, len(lines)) if pattern.match(lines[i]))
    depth = len(parents)
    end = next(
        (
            i
            for i in range(start + 1, len(lines))
            if re.match(rf"^(  ){{0,{depth}}}(# )?[a-z_]+:", lines[i]) or not lines[i].strip()
        ),
        len(lines),
    )
    return lines[start + 1 : end]


def test_every_key_of_an_absent_section_or_list_item_is_commented_with_its_default() -> None:
    lines = DEFAULT_YAML.read_text(encoding="utf-8").splitlines()
    absent = _absent_sections(Config)
    assert {"mqtt.tls", "home.entities", "runtime.delegates"} <= absent.keys()
    for dotted, models in absent.items():
        block = "\n".join(_block(lines, dotted))
        for model in models:
            for key, field in model.model_fields.items():
                if field.is_required():
                    want = rf"#\s+(- )?{key}: \S"  # an example value
                else:
                    value = (
                        yaml.safe_dump(field.get_default(call_default_factory=True), default_flow_style=True)
                        .removesuffix("\n...\n")
                        .strip()
                    )
                    want = rf"#\s+(- )?{key}: {re.escape(value)}(\s|$)"
                assert re.search(want, block), f"{dotted}: no commented {key} in\n{block}"
