"""``edge-agent bundle install PATH`` and ``edge-agent bundle status``.

    edge-agent bundle install /media/usb/bundle-2 --state-dir /var/lib/edge-agent \\
        --trust-store /etc/edge-agent/trust
    edge-agent bundle status --state-dir /var/lib/edge-agent
    edge-agent bundle rollback --state-dir /var/lib/edge-agent --trust-store /etc/edge-agent/trust

Exit codes: 0 done, 2 refused (verification or warm-up failed; the previous bundle stays active).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from edge_agent.errors import BundleError, ConfigError
from edge_agent.runtime.install import BundleInstaller, InstallResult
from edge_agent.runtime.signing import TrustStore
from edge_agent.store.config import resolve_state_dir

__all__ = ["register"]


def register(sub: Any) -> None:
    parser = sub.add_parser("bundle", help="install, inspect or roll back model bundles (A/B slots)")
    actions = parser.add_subparsers(dest="bundle_command", required=True)

    install = actions.add_parser("install", help="verify, warm up and atomically activate a bundle")
    install.add_argument("path", help="bundle directory to install")
    _common(install, trust=True)
    install.set_defaults(func=_install)

    status = actions.add_parser("status", help="show the active slot and the last install attempt")
    _common(status, trust=False)
    status.set_defaults(func=_status)

    rollback = actions.add_parser("rollback", help="re-activate the previous slot (verified again)")
    _common(rollback, trust=True)
    rollback.set_defaults(func=_rollback)


def _common(parser: argparse.ArgumentParser, *, trust: bool) -> None:
    parser.add_argument(
        "--state-dir",
        default=str(resolve_state_dir(None, "default")),
        help="the agent's reliability.state_dir (default $STATE_DIRECTORY, else "
        "$XDG_STATE_HOME/edge-agent/default, else ~/.local/state/edge-agent/default)",
    )
    if trust:
        parser.add_argument(
            "--trust-store",
            default=os.environ.get("EDGE_AGENT_TRUST_STORE"),
            help="directory of ed25519 public keys; bundles must be signed by one of them",
        )
        parser.add_argument(
            "--allow-unsigned",
            action="store_true",
            help="install without a trust store (development only; refused otherwise)",
        )


def _installer(args: argparse.Namespace) -> BundleInstaller:
    trust_dir = getattr(args, "trust_store", None)
    if trust_dir is None and not getattr(args, "allow_unsigned", True):
        raise ConfigError(
            "no --trust-store given: refusing unsigned bundles (use --allow-unsigned to override)"
        )
    trust = TrustStore.load(trust_dir) if trust_dir else None
    return BundleInstaller(args.state_dir, trust)


def _report(result: InstallResult) -> dict[str, Any]:
    return {
        "active_slot": result.slot,
        "model": result.bundle.model_id,
        "key_id": result.key_id,
        "path": str(result.bundle.path),
    }


def _install(args: argparse.Namespace) -> int:
    try:
        result = _installer(args).install(args.path)
    except (BundleError, ConfigError) as exc:
        print(f"edge-agent bundle install: refused: {exc}", file=sys.stderr)
        return 2
    _close(result)
    print(json.dumps({"installed": True, **_report(result)}))
    return 0


def _rollback(args: argparse.Namespace) -> int:
    try:
        result = _installer(args).rollback()
    except (BundleError, ConfigError) as exc:
        print(f"edge-agent bundle rollback: refused: {exc}", file=sys.stderr)
        return 2
    _close(result)
    print(json.dumps({"rolled_back": True, **_report(result)}))
    return 0


def _status(args: argparse.Namespace) -> int:
    try:
        status = BundleInstaller(args.state_dir, None).status()
    except BundleError as exc:
        print(f"edge-agent bundle status: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(status, indent=2, sort_keys=True))
    return 0


def _close(result: InstallResult) -> None:
    close = getattr(result.model, "close", None)
    if callable(close):
        close()
