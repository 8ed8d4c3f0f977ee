"""``edge-agent intents``: one text per line on stdin -> one JSON result per line on stdout.

A line may also be a JSON object ``{"text": ..., "context": {"area": ...}}``. Every input line
gives exactly one output line: empty lines, undecodable bytes and over-long lines included
(an over-long text is cut to the model's window and the result says ``"truncated": true``).

``--custom-sentences PATH`` (repeatable; a Home Assistant custom-sentences file or a directory
of them) adds the user's own intents (docs/intents.md, "Custom intents"); what was loaded is said
on stderr, and a file that cannot be used is an error (exit 2) naming the file and the intent.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from edge_agent.commands._lean import lean_start
from edge_agent.commands._options import add_weight_cache, open_task_model
from edge_agent.errors import EdgeAgentError
from edge_agent.records.intent import IntentResult

__all__ = ["parse_line", "register", "run"]

_BACKENDS = ("auto", "tflite-runtime", "litert")


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("intents", help="recognize intents: text lines on stdin, JSON lines on stdout")
    p.add_argument("--home", type=Path, help="home YAML (areas, entities, lists) to resolve names against")
    p.add_argument("--bundle", type=Path, help="model bundle directory (default: the shipped bundle)")
    p.add_argument("--backend", choices=_BACKENDS, default="auto", help="TFLite interpreter package")
    p.add_argument("--threads", type=int, default=1, help="interpreter threads (default 1)")
    p.add_argument(
        "--residency",
        choices=("resident", "stream", "auto"),
        default="resident",
        help="keep all segments mapped (resident) or stream them under a weight budget",
    )
    p.add_argument(
        "--weight-budget-mb", type=float, default=None, help="RAM budget for weights when streaming"
    )
    p.add_argument(
        "--slot-rules",
        choices=("full", "minimal"),
        default="full",
        help="full: the span repairs too (default); minimal: the tagger's spans, only normalized "
        "and resolved against the home (to measure the model's own slot accuracy)",
    )
    p.add_argument(
        "--custom-sentences",
        type=Path,
        action="append",
        metavar="PATH",
        help="Home Assistant custom-sentences YAML file or directory of them (repeatable): the "
        "user's own intents, recognized in their own words (needs a bundle with a sentence embedding)",
    )
    add_weight_cache(p)
    p.set_defaults(func=_main)


def parse_line(raw: bytes) -> tuple[str, str | None]:
    """(text, context area) of one input line; undecodable bytes become U+FFFD."""
    line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
    stripped = line.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        try:
            obj = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            return line, None
        if isinstance(obj, dict) and isinstance(obj.get("text"), str):
            context = obj.get("context")
            area = context.get("area") if isinstance(context, dict) else None
            return obj["text"], area if isinstance(area, str) and area else None
    return line, None


def run(recognizer: Any, lines: Iterator[bytes], out: IO[bytes]) -> int:
    """Process ``lines``; returns the number of results written."""
    n = 0
    for raw in lines:
        text, area = parse_line(raw)
        if text.strip():
            result = recognizer.recognize([text], context_area=area)[0]
        else:
            result = IntentResult(text, None, 0.0)
        out.write(orjson.dumps(result.to_dict()) + b"\n")
        out.flush()
        n += 1
    return n


def _main(args: argparse.Namespace) -> int:
    lean_start(openssl=False)  # the only hashing here is the bundle check
    from edge_agent.nlu.home import Home
    from edge_agent.nlu.recognizer import IntentRecognizer
    from edge_agent.runtime.bundle import default_bundle_path, load_bundle

    try:
        home = Home.load(args.home) if args.home else None
        bundle = load_bundle(args.bundle or default_bundle_path())
        model = open_task_model(args, bundle, "intents")
        recognizer = IntentRecognizer(model, home, slot_repair=args.slot_rules == "full")
        if args.custom_sentences:
            _load_custom(recognizer, args.custom_sentences)
    except EdgeAgentError as exc:
        print(f"edge-agent intents: {exc}", file=sys.stderr)
        return 2
    run(recognizer, iter(sys.stdin.buffer.readline, b""), sys.stdout.buffer)
    return 0


def _load_custom(recognizer: Any, paths: list[Path]) -> None:
    """Load the custom sentences into ``recognizer`` and say what was loaded on stderr."""
    from edge_agent.nlu.custom import load_custom_sentences

    start = time.perf_counter()
    index = recognizer.load_custom(load_custom_sentences(paths))
    info = index.summary()
    taught = f", teaching {', '.join(info['taught'])}" if info["taught"] else ""
    print(
        f"edge-agent intents: custom sentences: {info['intents']} intents, {info['examples']} "
        f"examples{taught} from {', '.join(info['files'])} ({time.perf_counter() - start:.2f} s)",
        file=sys.stderr,
    )
