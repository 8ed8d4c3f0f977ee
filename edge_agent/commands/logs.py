"""``edge-agent logs classify|summarize``: log lines in (a file or stdin), JSON lines out.

``classify`` writes one JSON object per input line, always (empty, undecodable and over-long
lines included; those say ``"truncated": true`` or ``"invalid_utf8": true``)::

    {"line", "severity", "category", "anomaly", "score", "template", "template_id"}

plus ``"incident": n`` on the lines of the source's n-th incident and ``"alert": true`` on the
line that opened it (the one an alert reports; docs/logs.md, "What an alert means").
``summarize`` writes the alert and summary payloads the agent would publish, one per line.
Without a model bundle the labels come from keyword rules (said once on stderr).
``--residency stream|auto`` with ``--weight-budget-mb`` runs a bundle larger than the RAM it may
use (docs/runtime.md); the labels are the same as with ``resident``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from edge_agent.commands._options import add_weight_cache, open_task_model
from edge_agent.errors import ConfigError, EdgeAgentError
from edge_agent.logs.config import LogsConfig
from edge_agent.logs.parse import decode_line
from edge_agent.logsetup import add_log_format, configure_logging
from edge_agent.records.logs import RawLine

__all__ = ["read_lines", "register"]

_CHUNK = 256
_BACKENDS = ("auto", "tflite-runtime", "litert")
_RESIDENCIES = ("resident", "stream", "auto")


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("logs", help="classify or summarize log lines (file or stdin)")
    actions = p.add_subparsers(dest="logs_command", required=True)
    c = actions.add_parser("classify", help="one JSON label per input line")
    _common(c)
    c.set_defaults(func=_classify)
    s = actions.add_parser("summarize", help="window summaries and alerts as JSON lines")
    _common(s)
    s.add_argument("--window-lines", type=int, default=None, help="close a window after N lines")
    s.add_argument("--window-s", type=float, default=None, help="close a window after S seconds")
    s.add_argument("--source", default=None, help="source name in the payloads (default: file name)")
    s.set_defaults(func=_summarize)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", default="-", help="log file, or - for stdin (default)")
    p.add_argument("--bundle", type=Path, help="model bundle directory (default: the shipped bundle)")
    p.add_argument("--backend", choices=_BACKENDS, default="auto", help="TFLite interpreter package")
    p.add_argument("--threads", type=_positive_int, default=1, help="interpreter threads (default 1)")
    p.add_argument(
        "--residency",
        choices=_RESIDENCIES,
        default="resident",
        help="keep all segments mapped (resident), map each just before it runs (stream), "
        "or keep what fits in --weight-budget-mb and stream the rest (auto)",
    )
    p.add_argument(
        "--weight-budget-mb",
        type=_positive_float,
        default=None,
        help="MB of weights mapped at once when streaming (auto needs it)",
    )
    add_weight_cache(p)
    add_log_format(p)
    p.add_argument("--no-model", action="store_true", help="keyword labels only, even with a bundle")
    p.add_argument("--state-dir", type=Path, default=None, help="keep templates here across runs")


def read_lines(fh: IO[bytes]) -> Iterator[tuple[str, bool]]:
    """(text, was invalid UTF-8) per line of ``fh``; CR/LF endings removed."""
    for raw in iter(fh.readline, b""):
        text, invalid = decode_line(raw.rstrip(b"\r\n"))
        yield text, invalid


def _load_model(args: argparse.Namespace) -> Any:
    if args.no_model:
        return None
    from edge_agent.runtime.bundle import default_bundle_path, load_bundle

    path = args.bundle or default_bundle_path()
    if args.bundle is None and not (Path(path) / "manifest.json").exists():
        print("edge-agent logs: no model bundle installed; labels come from keyword rules", file=sys.stderr)
        return None
    if args.residency == "auto" and args.weight_budget_mb is None:
        raise ConfigError("--residency auto needs --weight-budget-mb (MB of weights to keep mapped)")
    return open_task_model(args, load_bundle(path), "logs")


def _service(args: argparse.Namespace, **overrides: Any) -> Any:
    from edge_agent.logs.service import LogService

    configure_logging(stream=sys.stderr, log_format=args.log_format)  # stdout is data
    fields = {k: v for k, v in overrides.items() if v is not None}
    if args.state_dir is not None:
        fields["state_dir"] = str(args.state_dir)
    service = LogService(model=_load_model(args), config=LogsConfig(**fields))
    heads = service.classifier.heads
    if service.classifier.has_model and len(heads) < 3:
        print(
            "edge-agent logs: the bundle's own metrics are too low for "
            f"{', '.join(h for h in ('severity', 'category', 'anomaly') if h not in heads)}; "
            "keyword rules answer for those",
            file=sys.stderr,
        )
    return service


def _open(name: str) -> IO[bytes]:
    return sys.stdin.buffer if name == "-" else open(name, "rb")


def _chunks(fh: IO[bytes]) -> Iterator[list[tuple[str, bool]]]:
    chunk: list[tuple[str, bool]] = []
    for item in read_lines(fh):
        chunk.append(item)
        if len(chunk) >= _CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _classify(args: argparse.Namespace) -> int:
    try:
        service = _service(args)
        fh = _open(args.file)
    except (EdgeAgentError, OSError) as exc:
        print(f"edge-agent logs classify: {exc}", file=sys.stderr)
        return 2
    out = sys.stdout.buffer
    with fh:
        for chunk in _chunks(fh):
            for (_, invalid), result in zip(
                chunk, service.process([RawLine(t) for t, _ in chunk]), strict=True
            ):
                doc = result.to_dict()
                if invalid:
                    doc["invalid_utf8"] = True
                out.write(orjson.dumps(doc) + b"\n")
            out.flush()
    service.save()
    return 0


def _summarize(args: argparse.Namespace) -> int:
    name = args.source or ("stdin" if args.file == "-" else Path(args.file).name or "file")
    source = "".join("_" if c in "+#/\x00" else c for c in name)[:128]  # one valid topic level
    try:
        service = _service(args, window_lines=args.window_lines, window_s=args.window_s)
        fh = _open(args.file)
    except (EdgeAgentError, OSError, ValueError) as exc:
        print(f"edge-agent logs summarize: {exc}", file=sys.stderr)
        return 2
    out = sys.stdout.buffer
    with fh:
        for chunk in _chunks(fh):
            for msg in service.ingest(source, [RawLine(t) for t, _ in chunk], time.time()):
                out.write(orjson.dumps(msg.payload) + b"\n")
            out.flush()
    for msg in service.flush(time.time()):
        out.write(orjson.dumps(msg.payload) + b"\n")
    return 0
