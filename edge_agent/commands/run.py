"""``edge-agent run --config FILE`` and ``edge-agent check-config FILE``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from edge_agent.errors import ConfigError
from edge_agent.logsetup import add_log_format

__all__ = ["register"]

EXIT_INVALID = 2
EXIT_UNREACHABLE = 3  # the broker cannot be reached (the agent's own exit code for that, too)


def register(subparsers: Any) -> None:
    run = subparsers.add_parser("run", help="run the agent on an MQTT broker")
    run.add_argument("--config", "-c", metavar="FILE", help="YAML config (default: built-in defaults)")
    add_log_format(run)
    run.set_defaults(func=_run)
    check = subparsers.add_parser(
        "check-config", help="validate a config file (exit 0 valid, 2 invalid, 3 broker unreachable)"
    )
    check.add_argument("file", metavar="FILE")
    check.add_argument(
        "--probe",
        action="store_true",
        help="also connect to the configured broker once (exit 3 when that fails)",
    )
    check.add_argument(
        "--timeout",
        type=float,
        default=5.0,
        metavar="S",
        help="--probe: seconds to wait for the broker's answer (default 5)",
    )
    check.set_defaults(func=_check)


def _check(args: argparse.Namespace) -> int:
    from edge_agent.config import load

    try:
        config = load(args.file)
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_INVALID
    print(
        f"{args.file}: valid (site {config.site_id!r}, broker {config.mqtt.host}:{config.mqtt.port}, "
        f"MQTT {config.mqtt.protocol})"
    )
    if not args.probe:
        return 0
    from edge_agent.transport.probe import probe_broker

    problem = probe_broker(config.mqtt, config.client_id, config.mqtt.password, timeout=args.timeout)
    if problem is not None:
        print(f"edge-agent check-config: broker unreachable: {problem}", file=sys.stderr)
        return EXIT_UNREACHABLE
    print(f"broker {config.mqtt.host}:{config.mqtt.port}: connected (MQTT {config.mqtt.protocol})")
    return 0


def _run(args: argparse.Namespace) -> int:
    from edge_agent.commands._lean import lean_start

    lean_start(openssl=False, malloc_arenas=2)  # OpenSSL loads with a TLS connection only
    from edge_agent.app import run_agent
    from edge_agent.config import Config, load

    try:
        config = load(args.config) if args.config else Config.model_validate({})
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_INVALID
    return run_agent(config, log_format=args.log_format)
