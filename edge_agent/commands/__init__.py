"""CLI subcommands. Each module exposes ``register(subparsers)`` which adds its parser(s)
and sets ``func`` (a callable taking the parsed namespace and returning an exit code)."""
