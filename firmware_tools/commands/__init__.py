"""``edge-fw`` subcommands; each module exposes ``register(subparsers)``."""
