"""``edge-fw keygen`` and ``edge-fw sign``: ed25519 keys and bundle signatures.

    edge-fw keygen --out keys/            # keys/bundle-signing.key (0600) + .pub
    edge-fw sign build/bundle --key keys/bundle-signing.key

Copy the ``.pub`` file into the gateway's trust store directory; keep the ``.key`` offline.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from edge_agent.errors import BundleError, ConfigError
from edge_agent.runtime.signing import generate_keypair, key_id, load_private_key, sign_bundle

__all__ = ["register"]


def register(sub: Any) -> None:
    keygen = sub.add_parser("keygen", help="create an ed25519 key pair for signing bundles")
    keygen.add_argument("--out", required=True, help="directory for <name>.key and <name>.pub")
    keygen.add_argument("--name", default="bundle-signing", help="file name stem (default bundle-signing)")
    keygen.set_defaults(func=_keygen)

    sign = sub.add_parser("sign", help="sign a bundle's manifest (writes manifest.sig)")
    sign.add_argument("bundle", help="bundle directory")
    sign.add_argument("--key", required=True, help="ed25519 private key (PEM, from edge-fw keygen)")
    sign.set_defaults(func=_sign)


def _keygen(args: argparse.Namespace) -> int:
    try:
        priv, pub = generate_keypair(args.out, args.name)
    except ConfigError as exc:
        print(f"edge-fw keygen: {exc}", file=sys.stderr)
        return 2
    key = load_private_key(priv)
    print(f"private key: {priv} (keep offline, mode 0600)")
    print(f"public key:  {pub} (copy into the gateway trust store)")
    print(f"key id:      {key_id(key.public_key())}")
    return 0


def _sign(args: argparse.Namespace) -> int:
    try:
        key = load_private_key(args.key)
        sig = sign_bundle(args.bundle, key)
    except (ConfigError, BundleError) as exc:
        print(f"edge-fw sign: {exc}", file=sys.stderr)
        return 2
    print(f"signed {args.bundle} with key {key_id(key.public_key())}: {sig}")
    return 0
