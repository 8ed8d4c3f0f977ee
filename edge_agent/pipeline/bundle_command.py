"""Input ``{prefix}/{site}/bundle/install``: stage, verify and activate a bundle from a local path.

Payload: JSON ``{"id": "b1", "path": "/var/lib/edge-agent/incoming/intents-2"}``. The path must lie
inside one of ``reliability.bundles.install_from``; the bundle is copied into the inactive A/B slot,
verified (signature against the trust store when one is configured, sizes, sha256), warmed up and
only then activated. One reply per command on ``{prefix}/{site}/bundle/reply``::

    {"schema": "edge-agent/bundle-reply/1", "id": "b1", "ok": true, "model": "edge-intents@1.1.0",
     "slot": "b", "key_id": "3f1c9a0b7d2e4f68"}
    {"schema": "edge-agent/bundle-reply/1", "id": "b1", "ok": false, "error": "... sha256 mismatch ..."}

A refused bundle leaves the active one serving. Restrict who may publish here with a broker ACL
(see docs/security.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import orjson

from edge_agent.errors import BundleError, PayloadError
from edge_agent.messages.topics import SiteTopics
from edge_agent.pipeline.core import Envelope, HandlerBase, Outcome, Output, Route

__all__ = ["COMMAND_SUFFIX", "REPLY_SCHEMA", "REPLY_SUFFIX", "BundleCommandHandler", "bundle_route"]

COMMAND_SUFFIX = "bundle/install"
REPLY_SUFFIX = "bundle/reply"
REPLY_SCHEMA = "edge-agent/bundle-reply/1"
_MAX_PATH = 4096


class InstallerLike(Protocol):
    def install(self, source: str | Path) -> Any: ...


def bundle_route(topics: SiteTopics) -> Route:
    exact = topics.suffix(COMMAND_SUFFIX)
    return Route("bundle", exact, lambda topic: "" if topic == exact else None)


class BundleCommandHandler(HandlerBase):
    """Runs install commands one at a time; ``on_activated(result)`` swaps the serving model."""

    kind = "bundle"
    priority = 20
    batch_max = 1
    batch_wait_s = 0.0

    def __init__(
        self,
        installer: InstallerLike,
        topics: SiteTopics,
        allowed_roots: Sequence[Path],
        on_activated: Callable[[Any], None],
    ) -> None:
        self.installer = installer
        self.reply_topic = topics.suffix(REPLY_SUFFIX)
        self.allowed_roots = [Path(p).resolve() for p in allowed_roots]
        self.on_activated = on_activated

    def handle(self, batch: list[Envelope]) -> list[Outcome]:
        return [self._one(env) for env in batch]

    def _one(self, env: Envelope) -> Outcome:
        ident: str | None = None
        try:
            ident, path = self._parse(env.payload)
            result = self.installer.install(self._allowed(path))
            self.on_activated(result)
            reply: dict[str, Any] = {
                "ok": True,
                "model": result.bundle.model_id,
                "slot": result.slot,
                "key_id": result.key_id,
            }
        except (PayloadError, BundleError) as exc:
            reply = {"ok": False, "error": str(exc)}
        body = {"schema": REPLY_SCHEMA, "id": ident, **reply}
        output = Output(topic=self.reply_topic, payload=orjson.dumps(body), label="bundle_reply")
        return Outcome(inputs=[env], outputs=[output], record_latency=False)

    @staticmethod
    def _parse(payload: bytes) -> tuple[str | None, Path]:
        try:
            data = orjson.loads(payload)
        except orjson.JSONDecodeError as exc:
            raise PayloadError(f"bundle command is not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise PayloadError("bundle command must be a JSON object")
        ident = data.get("id")
        ident = None if ident is None else str(ident)[:256]
        path = data.get("path")
        if not isinstance(path, str) or not path or len(path) > _MAX_PATH or "\x00" in path:
            raise PayloadError("bundle command needs 'path': a local directory")
        return ident, Path(path)

    def _allowed(self, path: Path) -> Path:
        if not self.allowed_roots:
            raise PayloadError("bundle installs over MQTT are disabled (reliability.bundles.install_from)")
        resolved = path.resolve()
        for root in self.allowed_roots:
            if resolved == root or root in resolved.parents:
                return resolved
        roots = ", ".join(str(r) for r in self.allowed_roots)
        raise PayloadError(f"{path} is outside reliability.bundles.install_from ({roots})")
