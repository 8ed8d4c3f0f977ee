"""Tagged spans -> final Home Assistant style slots (docs/intents.md).

``build_slots`` normalizes values (numbers, durations, colors, steps), resolves ``name``,
``area``, ``floor`` and list names against the home, derives ``domain`` / ``device_class`` /
``state`` from the words that were tagged ("lights" -> light, "blinds" -> cover + blind,
"motion sensors" -> binary_sensor + motion, "wet" -> on), renames ``timer_name`` and
``list_name`` to ``name``, and fills ``area`` from the satellite's area when the request is
about "here" and no place was spoken.

The package: ``words`` (the spoken-word tables, also the single source for the training-data
generator, and the lookups over them), ``spans`` (span repair against the text and the home),
``collector`` (the slots of one utterance as they are built), ``media`` (the media rules) and
``build`` (``build_slots`` and the recognizer's ``home_supports`` / ``refine_intent``).
"""

from edge_agent.nlu.slots.build import build_slots, home_supports, refine_intent
from edge_agent.nlu.slots.words import (
    BINARY_CLASSES,
    CONTEXT_INTENTS,
    COVER_CLASS_WORDS,
    DOMAIN_WORDS,
    MEDIA_CLASSES,
    SENSOR_CLASSES,
    STATE_CLASSES,
    device_class_for,
    is_global_request,
    mentions_here,
    spoken_device_words,
)

__all__ = [
    "BINARY_CLASSES",
    "CONTEXT_INTENTS",
    "COVER_CLASS_WORDS",
    "DOMAIN_WORDS",
    "MEDIA_CLASSES",
    "SENSOR_CLASSES",
    "STATE_CLASSES",
    "build_slots",
    "device_class_for",
    "home_supports",
    "is_global_request",
    "mentions_here",
    "refine_intent",
    "spoken_device_words",
]
