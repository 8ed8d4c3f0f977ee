"""Value records that cross layers: what recognition returns, what log lines are, what leaves.

Leaf modules (they import nothing of ours but ``errors``), so the transport, the message modules,
the pipeline, the bridges, ``nlu`` and ``logs`` may all use them without importing each other:
``intent`` (``IntentResult``, ``SlotValue``, ``Span``), ``logs`` (``RawLine``, ``Outgoing``,
``LogLabel``).
"""
