"""Credential handling: file permission checks, secret reads, TLS contexts and log redaction.

Secrets live in files (``mqtt.password_file``, TLS keys, signing keys), never in the config
itself. A secret file that any user on the gateway can read is refused with a message that
says how to fix it. Nothing in here logs a secret; :func:`redact_event` is a structlog
processor that masks credential-looking fields before a log line is rendered.
"""

from __future__ import annotations

import os
import re
import ssl
import stat
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

from edge_agent.errors import ConfigError

__all__ = [
    "REDACTED",
    "check_secret_file",
    "is_secret_key",
    "read_secret",
    "redact",
    "redact_event",
    "resolve_credential",
    "tls_context",
]

REDACTED = "***"
_SECRET_KEY = re.compile(r"(pass(word|phrase)?|secret|token|credential|private[_-]?key|api[_-]?key)", re.I)
_MAX_SECRET_BYTES = 64 * 1024


def resolve_credential(path: str | Path, *, environ: Mapping[str, str] | None = None) -> Path:
    """Where a credential file lives.

    A relative path is looked up first in systemd's ``$CREDENTIALS_DIRECTORY`` (``LoadCredential=``),
    then relative to the working directory. An absolute path is used as given.
    """
    env = os.environ if environ is None else environ
    candidate = Path(path)
    creds = env.get("CREDENTIALS_DIRECTORY")
    if not candidate.is_absolute() and creds:
        in_creds = Path(creds) / candidate
        if in_creds.exists():
            return in_creds
    return candidate


def check_secret_file(path: str | Path, *, what: str = "secret file") -> Path:
    """Refuse a secret file that is missing, not a regular file, or readable/writable by others.

    Group read is allowed (a service group may share a CA key); world access is not.
    Returns the path on success; raises :class:`ConfigError` naming the file and the fix.
    """
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError as exc:
        raise ConfigError(f"{what} {p} does not exist") from exc
    except OSError as exc:
        raise ConfigError(f"{what} {p} cannot be read: {exc.strerror}") from exc
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{what} {p} is not a regular file")
    mode = stat.S_IMODE(st.st_mode)
    if mode & (stat.S_IROTH | stat.S_IWOTH):
        raise ConfigError(
            f"{what} {p} is accessible by every user on this machine (mode {mode:04o}); "
            f"refusing to use it. Fix: chmod 600 {p}"
        )
    return p


def read_secret(path: str | Path, *, what: str = "secret file") -> str:
    """Read a one-line secret (password, token) after :func:`check_secret_file`.

    A single trailing newline is removed; an empty secret is an error.
    """
    p = check_secret_file(path, what=what)
    if p.stat().st_size > _MAX_SECRET_BYTES:
        raise ConfigError(f"{what} {p} is larger than {_MAX_SECRET_BYTES} bytes; not a password file?")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{what} {p} is not UTF-8 text") from exc
    if text.endswith("\n"):
        text = text[:-1]
    if text.endswith("\r"):
        text = text[:-1]
    if not text:
        raise ConfigError(f"{what} {p} is empty")
    return text


def tls_context(
    ca_file: str | Path | None = None,
    cert_file: str | Path | None = None,
    key_file: str | Path | None = None,
    *,
    verify: bool = True,
) -> ssl.SSLContext:
    """A client TLS context. Verification (chain and host name) is on unless ``verify=False``.

    ``ca_file`` None means the system trust store. A client certificate needs both
    ``cert_file`` and ``key_file``; the key file must pass :func:`check_secret_file`.
    """
    if (cert_file is None) != (key_file is None):
        raise ConfigError("mqtt.tls: cert_file and key_file must be given together (client certificate)")
    cafile = None if ca_file is None else str(ca_file)
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=cafile)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if not verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if cert_file is not None and key_file is not None:
        key = check_secret_file(key_file, what="TLS client key")
        try:
            ctx.load_cert_chain(str(cert_file), str(key))
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"mqtt.tls: cannot load client certificate {cert_file}: {exc}") from exc
    return ctx


def is_secret_key(key: str) -> bool:
    """True for field names that hold credentials (``password``, ``token``, ...).

    Names ending in ``_file`` or ``_path`` hold a location, not the secret, and are kept.
    """
    lowered = key.lower()
    if lowered.endswith(("_file", "_path", "_dir")):
        return False
    return bool(_SECRET_KEY.search(key))


def redact(value: Any) -> Any:
    """A copy of ``value`` with every credential-named field masked, recursively."""
    if isinstance(value, Mapping):
        return {
            k: (REDACTED if isinstance(k, str) and is_secret_key(k) and v is not None else redact(v))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value


def redact_event(
    _logger: Any, _method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: mask credential fields before the event is rendered."""
    for key in list(event_dict):
        if is_secret_key(key) and event_dict[key] is not None:
            event_dict[key] = REDACTED
        elif isinstance(event_dict[key], Mapping | list | tuple):
            event_dict[key] = redact(event_dict[key])
    return event_dict
