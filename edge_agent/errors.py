"""The one exception hierarchy of edge-agent. Leaf module: imports nothing of ours."""

from __future__ import annotations

__all__ = [
    "BackendUnavailable",
    "BundleError",
    "ConfigError",
    "DelegateUnavailable",
    "EdgeAgentError",
    "InferenceError",
    "PayloadError",
    "TransportError",
]


class EdgeAgentError(Exception):
    """Base of every error edge-agent raises on purpose."""


class ConfigError(EdgeAgentError):
    """A config file or value is invalid; the message names the field and the fix."""


class BundleError(EdgeAgentError):
    """A model bundle is missing, corrupt, unsigned or of an unknown format."""


class BackendUnavailable(EdgeAgentError):
    """No usable inference backend (tflite-runtime / ai-edge-litert) could be loaded."""


class DelegateUnavailable(EdgeAgentError):
    """A delegate could not be loaded or failed its warm-up; the message says why."""


class InferenceError(EdgeAgentError):
    """An invoke failed at run time (e.g. an accelerator was unplugged)."""


class PayloadError(EdgeAgentError):
    """An input payload cannot be processed; it goes to the dead-letter topic with this reason."""


class TransportError(EdgeAgentError):
    """The MQTT connection was refused or lost in a way that needs the caller's attention."""
