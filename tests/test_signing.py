"""Ed25519 bundle signatures: keygen, sign, verify against a trust store, every refusal path."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path

import pytest

from edge_agent.errors import BundleError, ConfigError
from edge_agent.runtime.bundle import FORMAT_NAME, FORMAT_VERSION, MANIFEST, file_entry
from edge_agent.runtime.signing import (
    SIGNATURE_FILE,
    TrustStore,
    generate_keypair,
    key_id,
    load_private_key,
    load_signed_bundle,
    sign_bundle,
    verify_signature,
)
from firmware_tools.cli import main as edge_fw


def make_bundle(root: Path, payload: bytes = b"\x00segment-bytes\x01" * 64) -> Path:
    """A well-formed bundle on disk. Signing never maps the model, so segment bytes can be anything."""
    root.mkdir(parents=True)
    (root / "tok.model").write_bytes(b"tokenizer" * 10)
    (root / "seg.tflite").write_bytes(payload)
    seg = {"name": "seg", "file": "seg.tflite", "inputs": [], "outputs": []}
    manifest = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "model": {"id": "sig-test", "version": "3"},
        "tokenizer": {"file": "tok.model", "max_len": 8},
        "files": {name: file_entry(root / name) for name in ("tok.model", "seg.tflite")},
        "segments": [seg],
        "graphs": {"intents": ["seg"], "logs": ["seg"]},
        "labels": {"intents": ["A"], "slot_tags": ["O"], "severity": ["info"], "category": ["other"]},
    }
    (root / MANIFEST).write_text(json.dumps(manifest, indent=1))
    return root


@pytest.fixture()
def keys(tmp_path: Path) -> tuple[Path, Path, TrustStore]:
    priv, pub = generate_keypair(tmp_path / "keys")
    trust_dir = tmp_path / "trust"
    trust_dir.mkdir()
    (trust_dir / pub.name).write_bytes(pub.read_bytes())
    return priv, pub, TrustStore.load(trust_dir)


def test_keygen_writes_private_key_owner_only_and_refuses_overwrite(tmp_path: Path) -> None:
    priv, pub = generate_keypair(tmp_path, "k")
    assert stat.S_IMODE(priv.stat().st_mode) == 0o600
    assert b"PUBLIC KEY" in pub.read_bytes()
    assert b"PRIVATE KEY" in priv.read_bytes()
    with pytest.raises(ConfigError, match="already exists"):
        generate_keypair(tmp_path, "k")


def test_signed_bundle_verifies_and_loads(tmp_path: Path, keys: tuple[Path, Path, TrustStore]) -> None:
    priv, _, trust = keys
    bundle_dir = make_bundle(tmp_path / "b")
    key = load_private_key(priv)
    sig_path = sign_bundle(bundle_dir, key)
    assert sig_path.name == SIGNATURE_FILE
    kid, manifest_bytes = verify_signature(bundle_dir, trust)
    assert kid == key_id(key.public_key())
    assert manifest_bytes == (bundle_dir / MANIFEST).read_bytes()
    bundle = load_signed_bundle(bundle_dir, trust)
    assert bundle.model_id == "sig-test@3"


def test_manifest_edited_after_signing_is_refused(
    tmp_path: Path, keys: tuple[Path, Path, TrustStore]
) -> None:
    priv, _, trust = keys
    bundle_dir = make_bundle(tmp_path / "b")
    sign_bundle(bundle_dir, load_private_key(priv))
    manifest = json.loads((bundle_dir / MANIFEST).read_text())
    manifest["model"]["version"] = "4"
    (bundle_dir / MANIFEST).write_text(json.dumps(manifest, indent=1))
    with pytest.raises(BundleError, match="signature does not match"):
        load_signed_bundle(bundle_dir, trust)


def test_segment_swapped_after_signing_fails_hash_check(
    tmp_path: Path, keys: tuple[Path, Path, TrustStore]
) -> None:
    priv, _, trust = keys
    bundle_dir = make_bundle(tmp_path / "b")
    sign_bundle(bundle_dir, load_private_key(priv))
    seg = bundle_dir / "seg.tflite"
    data = bytearray(seg.read_bytes())
    data[5] ^= 0xFF  # same size, different content
    seg.write_bytes(bytes(data))
    verify_signature(bundle_dir, trust)  # the manifest itself is untouched
    with pytest.raises(BundleError, match="sha256 mismatch"):
        load_signed_bundle(bundle_dir, trust)


def test_unsigned_bundle_is_refused(tmp_path: Path, keys: tuple[Path, Path, TrustStore]) -> None:
    bundle_dir = make_bundle(tmp_path / "b")
    with pytest.raises(BundleError, match="not signed"):
        load_signed_bundle(bundle_dir, keys[2])


def test_bundle_signed_by_unknown_key_is_refused(tmp_path: Path, keys: tuple[Path, Path, TrustStore]) -> None:
    other_priv, _ = generate_keypair(tmp_path / "other")
    bundle_dir = make_bundle(tmp_path / "b")
    sign_bundle(bundle_dir, load_private_key(other_priv))
    with pytest.raises(BundleError, match="not in the trust store"):
        verify_signature(bundle_dir, keys[2])


def test_signature_of_another_bundle_is_refused(tmp_path: Path, keys: tuple[Path, Path, TrustStore]) -> None:
    priv, _, trust = keys
    key = load_private_key(priv)
    good = make_bundle(tmp_path / "good")
    evil = make_bundle(tmp_path / "evil", payload=b"evil" * 100)
    sign_bundle(good, key)
    (evil / SIGNATURE_FILE).write_bytes((good / SIGNATURE_FILE).read_bytes())
    with pytest.raises(BundleError, match="signature does not match"):
        verify_signature(evil, trust)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(signature="not base64 !!"), "not valid base64"),
        (lambda d: d.update(signature=base64.b64encode(b"short").decode()), "64 bytes"),
        (lambda d: d.update(algorithm="rsa"), "not supported"),
        (lambda d: d.update(version=99), "not an edge-agent-signature"),
        (lambda d: d.update(key_id=7), "must be strings"),
    ],
)
def test_malformed_signature_files_are_refused(
    tmp_path: Path, keys: tuple[Path, Path, TrustStore], mutate: object, message: str
) -> None:
    priv, _, trust = keys
    bundle_dir = make_bundle(tmp_path / "b")
    sig = sign_bundle(bundle_dir, load_private_key(priv))
    doc = json.loads(sig.read_text())
    assert callable(mutate)
    mutate(doc)
    sig.write_text(json.dumps(doc))
    with pytest.raises(BundleError, match=message):
        verify_signature(bundle_dir, trust)


def test_trust_store_must_hold_keys_and_not_be_world_writable(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ConfigError, match="no public keys"):
        TrustStore.load(empty)
    _, pub = generate_keypair(tmp_path / "k")
    store = tmp_path / "store"
    store.mkdir()
    (store / "a.pub").write_bytes(pub.read_bytes())
    assert len(TrustStore.load(store).keys) == 1
    os.chmod(store, 0o777)
    with pytest.raises(ConfigError, match="writable by every user"):
        TrustStore.load(store)
    os.chmod(store, 0o755)
    (store / "junk.pem").write_text("not a key")
    with pytest.raises(ConfigError, match="not a PEM public key"):
        TrustStore.load(store)


def test_world_readable_signing_key_is_refused(tmp_path: Path) -> None:
    priv, _ = generate_keypair(tmp_path)
    os.chmod(priv, 0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        load_private_key(priv)


def test_signing_a_corrupt_bundle_is_refused(tmp_path: Path, keys: tuple[Path, Path, TrustStore]) -> None:
    bundle_dir = make_bundle(tmp_path / "b")
    (bundle_dir / "seg.tflite").write_bytes(b"truncated")
    with pytest.raises(BundleError):
        sign_bundle(bundle_dir, load_private_key(keys[0]))
    assert not (bundle_dir / SIGNATURE_FILE).exists()


def test_edge_fw_keygen_and_sign_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert edge_fw(["keygen", "--out", str(tmp_path / "keys"), "--name", "release"]) == 0
    out = capsys.readouterr().out
    priv, pub = tmp_path / "keys" / "release.key", tmp_path / "keys" / "release.pub"
    assert priv.exists() and pub.exists()
    bundle_dir = make_bundle(tmp_path / "b")
    assert edge_fw(["sign", str(bundle_dir), "--key", str(priv)]) == 0
    trust = tmp_path / "trust"
    trust.mkdir()
    (trust / "release.pub").write_bytes(pub.read_bytes())
    kid, _ = verify_signature(bundle_dir, TrustStore.load(trust))
    assert kid in out
    # a second keygen into the same place and signing with a missing key both fail with exit 2
    assert edge_fw(["keygen", "--out", str(tmp_path / "keys"), "--name", "release"]) == 2
    assert edge_fw(["sign", str(bundle_dir), "--key", str(tmp_path / "nope.key")]) == 2
    assert "does not exist" in capsys.readouterr().err


# --- credential files and redaction (edge_agent.security): the same rules guard signing keys,
# MQTT passwords and TLS client keys


def test_password_file_rules(tmp_path: Path) -> None:
    from edge_agent.security import read_secret, resolve_credential

    pw = tmp_path / "mqtt.pass"
    pw.write_text("s3cret\n")
    os.chmod(pw, 0o640)
    assert read_secret(pw) == "s3cret"
    os.chmod(pw, 0o604)
    with pytest.raises(ConfigError, match=r"every user.*chmod 600"):
        read_secret(pw, what="mqtt.password_file")
    os.chmod(pw, 0o600)
    pw.write_text("")
    with pytest.raises(ConfigError, match="empty"):
        read_secret(pw)
    with pytest.raises(ConfigError, match="does not exist"):
        read_secret(tmp_path / "missing")
    with pytest.raises(ConfigError, match="not a regular file"):
        read_secret(tmp_path)
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "mqtt.pass").write_text("x")
    env = {"CREDENTIALS_DIRECTORY": str(creds)}
    assert resolve_credential("mqtt.pass", environ=env) == creds / "mqtt.pass"
    assert resolve_credential(pw, environ=env) == pw
    assert resolve_credential("other.pass", environ=env) == Path("other.pass")


def test_redaction_masks_secrets_but_keeps_paths() -> None:
    from edge_agent.security import REDACTED, redact, redact_event

    cfg = {
        "mqtt": {"host": "h", "password": "pw", "password_file": "/run/creds/p", "tls": {"key_file": "k"}},
        "clients": [{"api_key": "abc", "name": "n"}],
        "token": None,
    }
    out = redact(cfg)
    assert out["mqtt"]["password"] == REDACTED and out["mqtt"]["password_file"] == "/run/creds/p"
    assert out["clients"][0] == {"api_key": REDACTED, "name": "n"}
    assert out["token"] is None and cfg["mqtt"]["password"] == "pw"  # input untouched
    event = redact_event(None, "info", {"event": "connect", "passphrase": "p", "config": cfg})
    assert event["passphrase"] == REDACTED and event["config"]["mqtt"]["password"] == REDACTED
    assert "pw" not in json.dumps(event)


def test_tls_context_verifies_by_default_and_checks_client_key(tmp_path: Path) -> None:
    import datetime
    import ssl

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    from edge_agent.security import tls_context

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gateway")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    cert_file, key_file = tmp_path / "c.pem", tmp_path / "k.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    os.chmod(key_file, 0o600)
    ctx = tls_context(cert_file, cert_file, key_file)
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
    assert tls_context(verify=False).verify_mode == ssl.CERT_NONE
    os.chmod(key_file, 0o644)
    with pytest.raises(ConfigError, match="TLS client key"):
        tls_context(cert_file, cert_file, key_file)
    with pytest.raises(ConfigError, match="together"):
        tls_context(cert_file, cert_file, None)
