"""Atomic A/B bundle installation with verification, warm-up and rollback.

Layout under the state directory::

    <state>/bundles/a/          one bundle (manifest.json, manifest.sig, tokenizer, segments)
    <state>/bundles/b/          the other
    <state>/bundles/active      symlink to "a" or "b"; swapped with os.replace (atomic)
    <state>/bundles/state.json  what is active, what was there before, the last attempt
    <state>/bundles/.lock       flock: one installer at a time (agent or CLI)

``install(src)`` copies ``src`` into the inactive slot, then verifies the *copy* (signature
against the trust store, sizes and sha256 of every file), loads it and runs a warm-up on a
few inputs. Only when all of that passes is ``active`` swapped. Any failure leaves ``active``
where it was, so the last good bundle keeps serving, and the failure is recorded.
``rollback()`` swaps back to the previous slot (verified again first).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from edge_agent.errors import BundleError, EdgeAgentError
from edge_agent.runtime.bundle import Bundle, load_bundle
from edge_agent.runtime.signing import SIGNATURE_FILE, TrustStore, load_signed_bundle

__all__ = [
    "SLOTS",
    "WARM_UP_TEXTS",
    "BundleInstaller",
    "InstallResult",
    "WarmUp",
    "check_outputs",
    "model_warm_up",
]

SLOTS = ("a", "b")
WARM_UP_TEXTS = (
    "turn on the kitchen light",
    "set the thermostat to 21 degrees",
    "kernel: eth0: link down",
    "",
)
WarmUp = Callable[[Bundle], Any]


@dataclass(frozen=True)
class InstallResult:
    """A bundle that passed every check and is now active; ``model`` is what the warm-up built."""

    slot: str
    bundle: Bundle
    key_id: str | None
    model: Any


def model_warm_up(bundle: Bundle) -> Any:
    """Load the bundle with the runtime's ``Model`` and run a few real inputs through both graphs.

    Fails (BundleError) when an output has the wrong shape for the manifest's labels or is not
    finite. Returns the loaded model so the caller can serve with it without loading twice.
    """
    from edge_agent.runtime.model import Model  # runtime import: keeps install usable for status

    model = Model(bundle)
    try:
        check_outputs(bundle, model)
    except BaseException:
        model.close()
        raise
    return model


def check_outputs(bundle: Bundle, model: Any) -> None:
    """Run the warm-up texts through both graphs; ``BundleError`` when an output has the wrong
    shape for the manifest's labels or is not finite."""
    ids = np.stack([model.tokenizer.encode(t).ids for t in WARM_UP_TEXTS]).astype(np.int32)
    intent, slots = model.run_intents(ids)
    log_ids = np.stack([model.log_tokenizer.encode(t).ids for t in WARM_UP_TEXTS]).astype(np.int32)
    sev, cat, anom = model.run_logs(log_ids)
    n = len(WARM_UP_TEXTS)
    expected = {
        "intent_logits": (intent, (n, len(bundle.labels("intents")))),
        "slot_logits": (slots, (n, ids.shape[1], len(bundle.labels("slot_tags")))),
        "severity_logits": (sev, (n, len(bundle.labels("severity")))),
        "category_logits": (cat, (n, len(bundle.labels("category")))),
        "anomaly_logit": (anom, (n,)),
    }
    for name, (value, shape) in expected.items():
        if tuple(value.shape) != shape:
            raise BundleError(f"{bundle.path}: warm-up {name} has shape {value.shape}, expected {shape}")
        if not np.all(np.isfinite(value)):
            raise BundleError(f"{bundle.path}: warm-up {name} is not finite")


class BundleInstaller:
    """A/B slots under ``<state_dir>/bundles``. ``trust`` None means signatures are not required."""

    def __init__(
        self,
        state_dir: str | Path,
        trust: TrustStore | None,
        *,
        warm_up: WarmUp = model_warm_up,
    ) -> None:
        self.root = Path(state_dir) / "bundles"
        self.trust = trust
        self.warm_up = warm_up

    # ------------------------------------------------------------------ queries
    @property
    def pointer(self) -> Path:
        return self.root / "active"

    def active_slot(self) -> str | None:
        """``a``/``b`` or None before the first install."""
        try:
            target = os.readlink(self.pointer)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise BundleError(f"{self.pointer} is not a symlink: {exc.strerror}") from exc
        if target not in SLOTS:
            raise BundleError(f"{self.pointer} points at {target!r}, expected one of {SLOTS}")
        return target

    def active_path(self) -> Path | None:
        slot = self.active_slot()
        return None if slot is None else self.root / slot

    def status(self) -> dict[str, Any]:
        """The recorded state plus what the pointer says now."""
        state = self._read_state()
        state["active_slot"] = self.active_slot()
        state["state_dir"] = str(self.root)
        return state

    def load_active(self) -> Bundle | None:
        """The active bundle, verified (signature when a trust store is set). None before any install."""
        path = self.active_path()
        return None if path is None else self._verify(path)[0]

    # ------------------------------------------------------------------ changes
    def install(self, source: str | Path) -> InstallResult:
        """Stage ``source`` into the inactive slot, verify, warm up, then activate atomically."""
        src = Path(source)
        with self._locked():
            active = self.active_slot()
            slot = "b" if active == "a" else "a"
            try:
                result = self._stage_and_check(src, slot)
            except (EdgeAgentError, OSError) as exc:
                self._record_attempt(str(src), slot, ok=False, error=str(exc))
                _reraise(exc)
            self._swap(slot)
            self._record_activation(result, str(src), previous=active)
            return result

    def rollback(self) -> InstallResult:
        """Reactivate the previous slot after checking it again (signature, hashes, warm-up)."""
        with self._locked():
            active = self.active_slot()
            if active is None:
                raise BundleError("no bundle is installed; nothing to roll back to")
            previous = "b" if active == "a" else "a"
            if not (self.root / previous).is_dir():
                raise BundleError(f"slot {previous} is empty; nothing to roll back to")
            try:
                result = self._check(self.root / previous, previous)
            except (EdgeAgentError, OSError) as exc:
                _reraise(exc)
            self._swap(previous)
            self._record_activation(result, "rollback", previous=active)
            return result

    # ------------------------------------------------------------------ steps
    def _stage_and_check(self, src: Path, slot: str) -> InstallResult:
        if not (src / "manifest.json").is_file():
            raise BundleError(f"{src} is not a bundle directory (no manifest.json)")
        self.root.mkdir(parents=True, exist_ok=True)
        staging = self.root / f".{slot}.staging"
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(src, staging, symlinks=False)
        _fsync_tree(staging)
        target = self.root / slot
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
        _fsync_dir(self.root)
        return self._check(target, slot)

    def _check(self, path: Path, slot: str) -> InstallResult:
        bundle, kid = self._verify(path)
        model = self.warm_up(bundle)
        return InstallResult(slot, bundle, kid, model)

    def _verify(self, path: Path) -> tuple[Bundle, str | None]:
        if self.trust is None:
            return load_bundle(path), None
        bundle = load_signed_bundle(path, self.trust)
        sig = json.loads((path / SIGNATURE_FILE).read_bytes())
        return bundle, str(sig["key_id"])

    def _swap(self, slot: str) -> None:
        tmp = self.root / f".active.{os.getpid()}"
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        os.symlink(slot, tmp)
        os.replace(tmp, self.pointer)
        _fsync_dir(self.root)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with (self.root / ".lock").open("a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    # ------------------------------------------------------------------ state file
    def _read_state(self) -> dict[str, Any]:
        try:
            data = json.loads((self.root / "state.json").read_bytes())
        except FileNotFoundError:
            return {}
        except ValueError as exc:
            raise BundleError(f"{self.root / 'state.json'} is corrupt: {exc}") from exc
        return dict(data)

    def _write_state(self, state: dict[str, Any]) -> None:
        path = self.root / "state.json"
        tmp = path.with_name(f".state.{os.getpid()}.tmp")
        with tmp.open("wb") as fh:
            fh.write(json.dumps(state, indent=2, sort_keys=True).encode())
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

    def _record_attempt(self, source: str, slot: str, *, ok: bool, error: str | None) -> None:
        state = self._read_state()
        state["last_attempt"] = {"source": source, "slot": slot, "ok": ok, "error": error, "at": time.time()}
        self._write_state(state)

    def _record_activation(self, result: InstallResult, source: str, *, previous: str | None) -> None:
        state = self._read_state()
        state["active"] = {
            "slot": result.slot,
            "model": result.bundle.model_id,
            "key_id": result.key_id,
            "source": source,
            "activated_at": time.time(),
        }
        state["previous_slot"] = previous
        state["last_attempt"] = {
            "source": source,
            "slot": result.slot,
            "ok": True,
            "error": None,
            "at": time.time(),
        }
        self._write_state(state)


def _reraise(exc: BaseException) -> NoReturn:
    """Surface install failures as BundleError (keeping the original as the cause)."""
    if isinstance(exc, BundleError):
        raise exc
    raise BundleError(f"{type(exc).__name__}: {exc}") from exc


def _fsync_tree(root: Path) -> None:
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _fsync_dir(Path(dirpath))


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
