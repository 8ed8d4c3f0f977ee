"""Bridges: the agent speaking other systems' protocols on the same MQTT bus.

A bridge is one module here with its config model (a section of ``Config``), the pipeline
handler(s) and route(s) for the topics it reads, and nothing else; the payloads it reads and
writes are message modules in ``edge_agent.messages``. ``edge_agent.app`` builds the enabled ones
and registers their routes. Each is off unless its section says ``enabled: true``.

- ``hermes``: Rhasspy/Snips Hermes NLU queries answered with our recognizer.
- ``homeassistant``: Home Assistant MQTT discovery, entity states, learning the home from HA.
- ``control``: runtime control commands (intents on/off, thresholds, the home), persisted.
- ``wyoming``: Home Assistant's Wyoming protocol, a TCP intent and handle service
  (``wyoming_config`` holds its config model).
"""
