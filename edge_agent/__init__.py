"""edge-agent: an on-device language agent for IoT gateways."""

__all__ = ["__version__"]
__version__ = "0.1.0"
