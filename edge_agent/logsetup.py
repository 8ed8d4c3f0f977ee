"""Where the agent's own log events go and how they look: one structlog setup for every command.

People at a terminal read lines (time, level, event, then ``key=value``); a service under systemd,
a pipe or a file gets one JSON object per line (journald keeps one record per line):

- ``auto`` (the default): ``console`` when the stream is a terminal, ``json`` otherwise;
- ``console``: the lines for people, coloured on a terminal unless ``NO_COLOR`` is set;
- ``json``: one JSON object per line, whatever the stream.

Credentials are masked in both (``security.redact_event``). Importing this module imports neither
structlog nor the masking: a command's parser takes ``--log-format`` before ``lean_start``
(commands/_lean.py) has run, which must come before structlog's own imports (asyncio, rich).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any, Literal, TextIO

__all__ = ["LOG_FORMATS", "LogFormat", "add_log_format", "configure_logging", "resolve_format"]

LogFormat = Literal["auto", "console", "json"]
LOG_FORMATS: tuple[LogFormat, ...] = ("auto", "console", "json")


def resolve_format(log_format: LogFormat, stream: TextIO) -> Literal["console", "json"]:
    """``auto`` becomes ``console`` on a terminal and ``json`` anywhere else."""
    if log_format != "auto":
        return log_format
    isatty = getattr(stream, "isatty", None)
    try:
        return "console" if isatty is not None and isatty() else "json"
    except ValueError:  # a closed stream
        return "json"


def configure_logging(
    stream: TextIO | None = None, level: int = logging.INFO, log_format: LogFormat = "auto"
) -> None:
    """Send structlog events of ``level`` and above to ``stream`` (stderr by default)."""
    import structlog

    from edge_agent.security import redact_event

    out = stream or sys.stderr
    fmt = resolve_format(log_format, out)
    processors: list[Any] = [structlog.processors.add_log_level]
    if fmt == "json":
        processors += [
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            redact_event,  # credentials never reach the log
            structlog.processors.JSONRenderer(),
        ]
    else:
        colors = "NO_COLOR" not in os.environ and resolve_format("auto", out) == "console"
        processors += [
            structlog.processors.TimeStamper(fmt="%H:%M:%S", utc=False),
            redact_event,
            structlog.dev.ConsoleRenderer(colors=colors, exception_formatter=structlog.dev.plain_traceback),
        ]
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=out),
        cache_logger_on_first_use=False,
    )


def add_log_format(parser: Any) -> None:
    """``--log-format auto|console|json`` on a command's argparse parser."""
    parser.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default="auto",
        help="the agent's own log lines on stderr: console (for people), json (one object per line), "
        "or auto (default): console on a terminal, json otherwise (systemd, pipes, files)",
    )
