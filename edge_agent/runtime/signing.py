"""Ed25519 signatures over bundle manifests.

The manifest lists the size and sha256 of every file in the bundle, so a signature over the
manifest's exact bytes covers the whole bundle. The signature sits next to it in
``manifest.sig``, a small JSON document::

    {"format": "edge-agent-signature", "version": 1, "algorithm": "ed25519",
     "key_id": "3f1c9a0b7d2e4f68", "signature": "<base64 of 64 bytes>"}

The signed message is ``DOMAIN + manifest bytes`` (domain separation: a key used for bundles
cannot be tricked into signing something that verifies elsewhere). ``key_id`` is the first 16
hex digits of the sha256 of the raw 32-byte public key.

A trust store is a directory of PEM public keys (``*.pub`` or ``*.pem``). Verification happens
on the manifest bytes before :func:`edge_agent.runtime.bundle.load_bundle` checks file hashes,
and both before any model file is mapped.

``cryptography`` is imported by the functions that use it, not with this module: an agent without
a trust store loads bundles through here and never pays for it (about 6.5 MB of RSS).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from edge_agent.errors import BundleError, ConfigError
from edge_agent.runtime.bundle import MANIFEST, Bundle, load_bundle
from edge_agent.security import check_secret_file

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

__all__ = [
    "DOMAIN",
    "SIGNATURE_FILE",
    "TrustStore",
    "generate_keypair",
    "key_id",
    "load_private_key",
    "load_signed_bundle",
    "sign_bundle",
    "verify_signature",
]

SIGNATURE_FILE = "manifest.sig"
DOMAIN = b"edge-agent bundle manifest v1\n"
_SIG_FORMAT = "edge-agent-signature"
_SIG_VERSION = 1
_MAX_SIG_BYTES = 4096
_MAX_MANIFEST_BYTES = 16 << 20
_PUBLIC_SUFFIXES = (".pub", ".pem")


def key_id(public_key: Ed25519PublicKey) -> str:
    """Short stable id of a public key: 16 hex digits of sha256(raw key)."""
    from cryptography.hazmat.primitives import serialization

    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


@dataclass(frozen=True)
class TrustStore:
    """The public keys a bundle may be signed with, by key id."""

    path: Path
    keys: Mapping[str, Ed25519PublicKey]

    @classmethod
    def load(cls, directory: str | Path) -> TrustStore:
        """Read every ``*.pub``/``*.pem`` in ``directory``. An empty or unsafe store is an error."""
        root = Path(directory)
        if not root.is_dir():
            raise ConfigError(f"trust store {root} is not a directory")
        _refuse_world_writable(root, "trust store")
        keys: dict[str, Ed25519PublicKey] = {}
        for file in _key_files(root):
            _refuse_world_writable(file, "trust store key")
            public = _load_public_key(file)
            keys[key_id(public)] = public
        if not keys:
            raise ConfigError(f"trust store {root} holds no public keys (*.pub or *.pem)")
        return cls(root, keys)

    def __contains__(self, kid: object) -> bool:
        return kid in self.keys


def generate_keypair(out_dir: str | Path, name: str = "bundle-signing") -> tuple[Path, Path]:
    """Write ``<name>.key`` (PKCS#8 PEM, mode 0600) and ``<name>.pub`` into ``out_dir``.

    Refuses to overwrite an existing key. Returns (private key path, public key path).
    """
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    root = Path(out_dir)
    root.mkdir(parents=True, exist_ok=True)
    priv_path, pub_path = root / f"{name}.key", root / f"{name}.pub"
    for existing in (priv_path, pub_path):
        if existing.exists():
            raise ConfigError(f"{existing} already exists; refusing to overwrite a key")
    private = Ed25519PrivateKey.generate()
    priv_pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    pub_pem = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    fd = os.open(priv_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(priv_pem)
    pub_path.write_bytes(pub_pem)
    return priv_path, pub_path


def load_private_key(path: str | Path) -> Ed25519PrivateKey:
    """Read a PEM ed25519 private key; world-readable key files are refused."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    p = check_secret_file(path, what="signing key")
    try:
        key = serialization.load_pem_private_key(p.read_bytes(), password=None)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"signing key {p} is not an unencrypted PEM private key: {exc}") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigError(f"signing key {p} is not an ed25519 key")
    return key


def sign_bundle(bundle_dir: str | Path, private_key: Ed25519PrivateKey) -> Path:
    """Sign ``bundle_dir/manifest.json``; writes ``manifest.sig`` atomically and returns its path.

    The bundle is verified first (format, sizes, hashes): signing a broken bundle is refused.
    """
    root = Path(bundle_dir)
    load_bundle(root)
    manifest = _read_limited(root / MANIFEST, _MAX_MANIFEST_BYTES, "manifest")
    signature = private_key.sign(DOMAIN + manifest)
    doc = {
        "format": _SIG_FORMAT,
        "version": _SIG_VERSION,
        "algorithm": "ed25519",
        "key_id": key_id(private_key.public_key()),
        "signature": base64.b64encode(signature).decode("ascii"),
    }
    target = root / SIGNATURE_FILE
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_bytes(json.dumps(doc, indent=2).encode() + b"\n")
    os.replace(tmp, target)
    return target


def verify_signature(bundle_dir: str | Path, trust: TrustStore) -> tuple[str, bytes]:
    """Check ``manifest.sig`` against the trust store. Returns (key id, the verified manifest bytes).

    Raises :class:`BundleError` when the bundle is unsigned, signed by an unknown key, or the
    signature does not match the manifest.
    """
    from cryptography.exceptions import InvalidSignature

    root = Path(bundle_dir)
    manifest = _read_limited(root / MANIFEST, _MAX_MANIFEST_BYTES, "manifest")
    doc = _read_signature(root)
    kid = doc.key_id
    public = trust.keys.get(kid)
    if public is None:
        raise BundleError(f"{root}: signed with key {kid}, which is not in the trust store {trust.path}")
    try:
        public.verify(doc.signature, DOMAIN + manifest)
    except InvalidSignature as exc:
        raise BundleError(f"{root}: signature does not match the manifest (modified after signing?)") from exc
    return kid, manifest


def load_signed_bundle(bundle_dir: str | Path, trust: TrustStore, *, verify_hashes: bool = True) -> Bundle:
    """Verify the signature, then the bundle (sizes, hashes); nothing is mapped before both pass."""
    _, manifest_bytes = verify_signature(bundle_dir, trust)
    bundle = load_bundle(bundle_dir, verify_hashes=verify_hashes)
    if bundle.manifest != json.loads(manifest_bytes):
        raise BundleError(f"{bundle.path}: manifest changed while it was being verified")
    return bundle


@dataclass(frozen=True)
class _SignatureDoc:
    key_id: str
    signature: bytes


def _read_signature(root: Path) -> _SignatureDoc:
    path = root / SIGNATURE_FILE
    try:
        raw = _read_limited(path, _MAX_SIG_BYTES, "signature")
    except BundleError as exc:
        if not path.exists():
            raise BundleError(f"{root}: bundle is not signed (no {SIGNATURE_FILE})") from exc
        raise
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise BundleError(f"{path}: not JSON: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("format") != _SIG_FORMAT or doc.get("version") != _SIG_VERSION:
        raise BundleError(f"{path}: not an {_SIG_FORMAT} v{_SIG_VERSION} document")
    if doc.get("algorithm") != "ed25519":
        raise BundleError(f"{path}: algorithm {doc.get('algorithm')!r} is not supported (ed25519 only)")
    kid, sig = doc.get("key_id"), doc.get("signature")
    if not isinstance(kid, str) or not isinstance(sig, str):
        raise BundleError(f"{path}: key_id and signature must be strings")
    try:
        signature = base64.b64decode(sig, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BundleError(f"{path}: signature is not valid base64") from exc
    if len(signature) != 64:
        raise BundleError(f"{path}: an ed25519 signature is 64 bytes, this one is {len(signature)}")
    return _SignatureDoc(kid, signature)


def _read_limited(path: Path, limit: int, what: str) -> bytes:
    try:
        with path.open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise BundleError(f"{path}: cannot read {what}: {exc.strerror}") from exc
    if len(data) > limit:
        raise BundleError(f"{path}: {what} is larger than {limit} bytes")
    return data


def _key_files(root: Path) -> Iterator[Path]:
    for file in sorted(root.iterdir()):
        if file.suffix in _PUBLIC_SUFFIXES and file.is_file():
            yield file


def _load_public_key(path: Path) -> Ed25519PublicKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except ValueError as exc:
        raise ConfigError(f"trust store key {path} is not a PEM public key: {exc}") from exc
    if not isinstance(key, Ed25519PublicKey):
        raise ConfigError(f"trust store key {path} is not an ed25519 public key")
    return key


def _refuse_world_writable(path: Path, what: str) -> None:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & stat.S_IWOTH:
        raise ConfigError(f"{what} {path} is writable by every user (mode {mode:04o}); fix: chmod o-w {path}")
