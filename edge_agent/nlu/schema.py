"""The intent inventory and slot names the model is trained for (see docs/intents.md).

Order matters: it is the order of the model's intent head and slot tag head; the shipped
bundle's manifest repeats these labels and the runtime trusts the manifest, not this file.
"""

from __future__ import annotations

__all__ = ["INTENTS", "MEDIA_INTENTS", "OUT_OF_SCOPE", "SLOTS"]

OUT_OF_SCOPE = "__none__"  # training label for out-of-scope text; reported as intent null

# the intents about a media player (they default to the media_player domain and the satellite's area)
MEDIA_INTENTS: tuple[str, ...] = (
    "HassMediaPause",
    "HassMediaUnpause",
    "HassMediaNext",
    "HassMediaPrevious",
    "HassSetVolume",
    "HassSetVolumeRelative",
    "HassMediaPlayerMute",
    "HassMediaPlayerUnmute",
    "HassMediaSearchAndPlay",
)

INTENTS: tuple[str, ...] = (
    "HassTurnOn",
    "HassTurnOff",
    "HassToggle",
    "HassGetState",
    "HassLightSet",
    "HassSetPosition",
    "HassStopMoving",
    "HassClimateSetTemperature",
    "HassClimateGetTemperature",
    "HassFanSetSpeed",
    "HassVacuumStart",
    "HassVacuumReturnToBase",
    "HassLawnMowerStartMowing",
    "HassLawnMowerDock",
    *MEDIA_INTENTS,
    "HassStartTimer",
    "HassCancelTimer",
    "HassCancelAllTimers",
    "HassPauseTimer",
    "HassUnpauseTimer",
    "HassTimerStatus",
    "HassIncreaseTimer",
    "HassDecreaseTimer",
    "HassListAddItem",
    "HassListCompleteItem",
    "HassShoppingListAddItem",
    "HassShoppingListCompleteItem",
    "HassGetWeather",
    "HassGetCurrentTime",
    "HassGetCurrentDate",
    "HassBroadcast",
    "HassNevermind",
    "EdgeLightSetRelative",
    "EdgeClimateSetRelative",
)

# Slots that the tagger marks as text spans (BIO tags). Slots that are implied rather than
# spoken (domain, device_class, state from words like "lights", "open") are derived from
# spans of kind domain/device_class/state by the normalizer.
SLOTS: tuple[str, ...] = (
    "name",
    "area",
    "floor",
    "domain",
    "device_class",
    "state",
    "brightness",
    "brightness_step",
    "color",
    "position",
    "temperature",
    "temperature_step",
    "percentage",
    "volume_level",
    "volume_step",
    "duration",  # normalized into hours / minutes / seconds
    "start_duration",  # "the 20 minute timer": normalized into start_hours / start_minutes / ...
    "timer_name",  # reported as slot "name" on timer intents (HA's naming)
    "item",
    "list_name",  # reported as slot "name" on list intents
    "search_query",
    "media_class",
    "message",
    "conversation_command",
)
