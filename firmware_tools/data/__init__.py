"""Data generators (deterministic from a seed)."""
