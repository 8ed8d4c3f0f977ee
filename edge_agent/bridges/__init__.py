"""Bridges between the agent and other ecosystems (Wyoming; more move here with the refactor)."""
