"""Label inventories of the model's log heads. Order = head output order."""

from __future__ import annotations

__all__ = ["CATEGORIES", "LOUD", "SEVERITIES"]

# syslog-like, lowest to highest
SEVERITIES: tuple[str, ...] = ("debug", "info", "notice", "warning", "error", "critical")
# the severities a reader is told about: warning or worse
LOUD = frozenset(SEVERITIES[SEVERITIES.index("warning") :])

CATEGORIES: tuple[str, ...] = (
    "kernel",
    "service",  # init/systemd/daemons/app lifecycle
    "network",
    "wireless",  # Wi-Fi, BLE, Zigbee, Z-Wave, Thread radios
    "bridge",  # Zigbee/Modbus/serial/field-bus bridges
    "sensor",
    "power",
    "thermal",
    "storage",
    "auth",  # logins, sudo, ssh, certificates
    "application",
    "other",
)
