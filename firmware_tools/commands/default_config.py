"""``edge-fw default-config``: write ``configs/default.yaml`` from the config models.

    edge-fw default-config                 # rewrites configs/default.yaml
    edge-fw default-config --check         # exit 1 when the file differs from the models

Every key of ``edge_agent.config.Config`` is written with its default and its description as a
comment; a section starts with its model's first docstring paragraph. Keys whose section is
absent by default (``mqtt.tls``), the keys of list items (``home.entities``) and the delegate
kinds other than the default one are written as comments, uncommentable in place. The file is
generated so that it cannot fall behind the models: tests/test_default_config.py fails when it
differs from :func:`render`.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
import typing
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from edge_agent.config import Config

__all__ = ["DEFAULT_PATH", "register", "render"]

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "configs" / "default.yaml"
WIDTH = 110
COMMENT_COLUMN = 29  # where a key's comment starts when the line leaves room for it

HEADER = """\
# edge-agent configuration. Every key is optional; the values below are the defaults.
# Validate with:  edge-agent check-config configs/default.yaml
# Schema:         edge_agent/schemas/config.schema.json   Reference: docs/configuration.md
# Generated from the config models (edge_agent/config.py and the models it names) by
# `edge-fw default-config`: change a model's defaults or descriptions, then run it again.
# A commented key (`# key: value`) belongs to a section that is absent by default, or is one
# item of a list; uncomment it in place to use it.
"""

# values for required keys, written into the commented examples only
EXAMPLES: dict[str, Any] = {
    "home.entities.name": "Ceiling Light",
    "home.entities.domain": "light",
    "home.entities.area": "Kitchen",
    "runtime.delegates.library": "/usr/lib/libvx_delegate.so",
}

# what a section's docstring and descriptions cannot say in a line
NOTES: dict[str, list[str]] = {
    "sla": [
        "When the p95 latency of a task over its sliding window exceeds its budget, or the gateway",
        "is hot, the task steps down the ladder normal -> short_input -> small_model (the bundle's",
        "'small' variant, skipped without one) -> rules_only (logs only: templates and stated",
        "levels, no model), and back up with hysteresis. Results and stats carry the mode.",
    ],
}


def register(sub: Any) -> None:
    p = sub.add_parser("default-config", help="write configs/default.yaml from the config models")
    p.add_argument("--out", type=Path, default=DEFAULT_PATH, help="where to write (default %(default)s)")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 when --out is stale")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    text = render()
    out: Path = args.out
    if args.check:
        current = out.read_text(encoding="utf-8") if out.exists() else ""
        if current != text:
            print(f"edge-fw default-config: {out} is stale; run edge-fw default-config", file=sys.stderr)
            return 1
        print(f"{out} matches the config models")
        return 0
    out.write_text(text, encoding="utf-8")
    print(out)
    return 0


def render() -> str:
    """The whole default config file."""
    lines = HEADER.splitlines()
    for name, field in Config.model_fields.items():
        lines.append("")
        lines += _field(name, field, name, 0, commented=False)
    return "\n".join(lines) + "\n"


def _item_models(annotation: Any) -> list[type[BaseModel]]:
    """The models an annotation holds: ``T | None``, ``list[T]``, a (discriminated) union of them."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found += [m for m in _item_models(arg) if m not in found]
    return found


def _field(name: str, field: FieldInfo, path: str, depth: int, *, commented: bool) -> list[str]:
    default = field.get_default(call_default_factory=True)
    if isinstance(default, BaseModel):
        return _section(name, type(default), field, path, depth, present=True, commented=commented)
    models = _item_models(field.annotation)
    if models and isinstance(default, list) and default:  # list items by default, then the other kinds
        lines = _key(name, None, _describe(field), depth, commented=commented)
        for item in default:
            lines += _item(type(item), item, path, depth + 1, commented=commented)
        shown = {type(item) for item in default}
        for model in models:
            if model not in shown:
                lines += _item(model, None, path, depth + 1, commented=True)
        return lines
    if models and default is None:  # a section absent by default: all of it commented
        lines = _key(name, None, _describe(field), depth, commented=True)
        for model in models:
            lines += _keys(model, path, depth + 1, present=False, commented=True)
        return lines
    lines = _key(name, _value(default, path), _describe(field), depth, commented=commented)
    for model in models:  # an empty list by default: an item's keys, commented
        lines += _item(model, None, path, depth + 1, commented=True)
    return lines


def _section(
    name: str,
    model: type[BaseModel],
    field: FieldInfo,
    path: str,
    depth: int,
    *,
    present: bool,
    commented: bool,
) -> list[str]:
    """A section present by default: its comment, its name, its keys."""
    about = _first_paragraph(model)
    for doc in re.findall(r"docs/[\w.-]+\.md", field.description or ""):
        if doc not in about:
            about = f"{about.rstrip('.')} ({doc})."
    if depth == 0:
        lines = _comment(about, depth)
        lines += [f"# {line}" for line in NOTES.get(path, [])]
        lines.append(f"{name}:")
    else:
        lines = _key(name, None, about, depth, commented=commented)
    return lines + _keys(model, path, depth + 1, present=present, commented=commented)


def _keys(model: type[BaseModel], path: str, depth: int, *, present: bool, commented: bool) -> list[str]:
    """Every key of ``model``; where the section is not ``present`` by default, a required key
    shows an example value."""
    lines: list[str] = []
    for key, sub in model.model_fields.items():
        sub_path = f"{path}.{key}"
        if not present and sub.is_required():
            example = _value(EXAMPLES.get(sub_path), sub_path)
            lines += _key(key, example, f"(required) {_describe(sub)}", depth, commented=True)
        else:
            lines += _field(key, sub, sub_path, depth, commented=commented)
    return lines


def _item(
    model: type[BaseModel], item: BaseModel | None, path: str, depth: int, *, commented: bool
) -> list[str]:
    """One list item: ``- key: value`` then its other keys, each with its description."""
    lines: list[str] = []
    for i, (key, sub) in enumerate(model.model_fields.items()):
        sub_path = f"{path}.{key}"
        if item is not None:
            value = getattr(item, key)
            text = _value(value.model_dump(mode="json") if isinstance(value, BaseModel) else value, sub_path)
        elif sub.is_required():
            text = _value(EXAMPLES.get(sub_path), sub_path)
        else:
            text = _value(sub.get_default(call_default_factory=True), sub_path)
        about = _describe(sub) if key != "kind" else _first_paragraph(model)
        if sub.is_required():
            about = f"(required) {about}"
        marker = "- " if i == 0 else "  "
        lines += _key(marker + key, text, about, depth, commented=commented)
    return lines


def _key(key: str, value: str | None, about: str, depth: int, *, commented: bool) -> list[str]:
    """``key: value  # about``, or the comment on the lines above when the line would be too long."""
    indent = "  " * depth
    body = f"{key}:" if value is None else f"{key}: {value}"
    head = f"{indent}# {body}" if commented else f"{indent}{body}"
    if not about:
        return [head]
    column = max(COMMENT_COLUMN, len(head) + 2)
    line = f"{head.ljust(column)}# {about}"
    if len(line) <= WIDTH:
        return [line]
    marker = 2 if key.startswith("  ") else 0  # an item's later key: the comment starts where the key does
    above = _comment(about, depth, hash_prefix="# " if commented else "", shift=marker)
    return [*above, head]


def _comment(text: str, depth: int, hash_prefix: str = "", shift: int = 0) -> list[str]:
    indent = "  " * depth
    if hash_prefix:
        hash_prefix += " " * shift
    else:
        indent += " " * shift
    width = WIDTH - len(indent) - len(hash_prefix) - 2
    return [f"{indent}{hash_prefix}# {line}" for line in textwrap.wrap(text, width)]


def _value(value: Any, path: str) -> str:
    """A value as YAML on one line (flow style)."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if isinstance(value, Path):
        value = str(value)
    text = yaml.safe_dump(value, default_flow_style=True, width=1 << 16, sort_keys=False).strip()
    if text.endswith("\n..."):
        text = text[: -len("\n...")]
    if "\n" in text:
        raise ValueError(f"{path}: default {value!r} does not fit on one line")
    return text


def _describe(field: FieldInfo) -> str:
    return " ".join((field.description or "").split()).replace("``", "`")


def _first_paragraph(model: type[BaseModel]) -> str:
    doc = (model.__doc__ or model.__name__).strip().split("\n\n")[0]
    return " ".join(doc.split()).replace("``", "`")
