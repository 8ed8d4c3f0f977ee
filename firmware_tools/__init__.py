"""Build-machine tools for edge-agent: data, training/distillation, conversion, bundles, signing.

May import edge_agent (for the bundle format); edge_agent never imports this package.
"""
