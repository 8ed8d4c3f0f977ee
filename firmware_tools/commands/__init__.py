"""``edge-fw`` subcommands; each module exposes ``register(subparsers)``."""

from __future__ import annotations

from pathlib import Path


def refuse_signed(bundle: Path, command: str, doing: str, do: str) -> bool:
    """True (after saying why on stderr) when ``bundle`` is signed: a command that rewrites the
    manifest works on an unsigned bundle, signed afterwards."""
    import sys

    from edge_agent.runtime.signing import SIGNATURE_FILE

    if not (bundle / SIGNATURE_FILE).exists():
        return False
    print(
        f"edge-fw {command}: {bundle} is signed; {doing} changes its manifest, so {do} "
        f"an unsigned bundle and sign it afterwards",
        file=sys.stderr,
    )
    return True
