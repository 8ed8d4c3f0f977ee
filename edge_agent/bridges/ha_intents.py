"""Which Home Assistant release runs which intent (the one table; docs/home-assistant.md mirrors it).

Home Assistant runs an intent only when one of its integrations registered a handler for it
(``intent.async_register``); the set grows from release to release. ``SINCE`` gives, for every
intent of our inventory that HA can run, the first release whose sources register it, and the
integration that does. It was read from HA's own wheels, release by release (the ``.0`` of every
month from 2024.6 to 2026.2, and 2025.4.4): ``homeassistant/components/<integration>/intent.py``
and ``homeassistant/helpers/intent.py``. The end-to-end test checks it again at run time against
the handlers a real HA core registered (tests/test_ha_wyoming_e2e.py).

An intent missing from ``SINCE`` (our extensions ``EdgeLightSetRelative``, ``EdgeClimateSetRelative``)
is never sent to HA as such; neither is an intent the listening release predates
(``edge_agent.bridges.ha_plan`` maps it to one with the same effect or explains in words).
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = [
    "OLDEST",
    "SINCE",
    "WYOMING_CONVERSATION",
    "HaVersion",
    "Since",
    "parse_version",
    "runs",
]


class HaVersion(NamedTuple):
    """A Home Assistant release as year and month (intents change with the monthly releases)."""

    year: int
    month: int

    def __str__(self) -> str:
        return f"{self.year}.{self.month}"


class Since(NamedTuple):
    """The first release that registers an intent, and the integration whose sources do."""

    version: HaVersion
    integration: str


# HA's Wyoming integration has a conversation entity (the path this agent serves) since 2024.11
WYOMING_CONVERSATION = HaVersion(2024, 11)
# what the agent assumes when it does not know the listening release: the oldest one on this path
OLDEST = WYOMING_CONVERSATION

_ALWAYS = WYOMING_CONVERSATION  # registered before 2024.11: every release on this path runs it

SINCE: dict[str, Since] = {
    "HassTurnOn": Since(_ALWAYS, "intent"),
    "HassTurnOff": Since(_ALWAYS, "intent"),
    "HassToggle": Since(_ALWAYS, "intent"),
    "HassGetState": Since(_ALWAYS, "intent"),
    "HassLightSet": Since(_ALWAYS, "light"),
    "HassSetPosition": Since(_ALWAYS, "intent"),
    "HassStopMoving": Since(HaVersion(2026, 1), "intent"),
    "HassClimateSetTemperature": Since(HaVersion(2025, 2), "climate"),
    "HassClimateGetTemperature": Since(_ALWAYS, "intent"),
    "HassFanSetSpeed": Since(HaVersion(2025, 9), "fan"),
    "HassVacuumStart": Since(_ALWAYS, "vacuum"),
    "HassVacuumReturnToBase": Since(_ALWAYS, "vacuum"),
    "HassLawnMowerStartMowing": Since(HaVersion(2025, 10), "lawn_mower"),
    "HassLawnMowerDock": Since(HaVersion(2025, 10), "lawn_mower"),
    "HassMediaPause": Since(_ALWAYS, "media_player"),
    "HassMediaUnpause": Since(_ALWAYS, "media_player"),
    "HassMediaNext": Since(_ALWAYS, "media_player"),
    "HassMediaPrevious": Since(_ALWAYS, "media_player"),
    "HassSetVolume": Since(_ALWAYS, "media_player"),
    "HassSetVolumeRelative": Since(HaVersion(2025, 9), "media_player"),
    "HassMediaPlayerMute": Since(HaVersion(2025, 11), "media_player"),
    "HassMediaPlayerUnmute": Since(HaVersion(2025, 11), "media_player"),
    "HassMediaSearchAndPlay": Since(HaVersion(2025, 6), "media_player"),
    "HassStartTimer": Since(_ALWAYS, "intent"),
    "HassCancelTimer": Since(_ALWAYS, "intent"),
    "HassCancelAllTimers": Since(HaVersion(2024, 12), "intent"),
    "HassPauseTimer": Since(_ALWAYS, "intent"),
    "HassUnpauseTimer": Since(_ALWAYS, "intent"),
    "HassTimerStatus": Since(_ALWAYS, "intent"),
    "HassIncreaseTimer": Since(_ALWAYS, "intent"),
    "HassDecreaseTimer": Since(_ALWAYS, "intent"),
    "HassListAddItem": Since(_ALWAYS, "todo"),
    "HassListCompleteItem": Since(HaVersion(2025, 4), "todo"),
    "HassShoppingListAddItem": Since(_ALWAYS, "shopping_list"),
    "HassShoppingListCompleteItem": Since(HaVersion(2025, 7), "shopping_list"),
    "HassGetWeather": Since(_ALWAYS, "weather"),
    "HassGetCurrentTime": Since(_ALWAYS, "intent"),
    "HassGetCurrentDate": Since(_ALWAYS, "intent"),
    "HassBroadcast": Since(HaVersion(2025, 2), "assist_satellite"),
    "HassNevermind": Since(_ALWAYS, "intent"),
}

_VERSION_RE = re.compile(r"^\s*(\d{4})\.(\d{1,2})(?:\.\d+)?(?:[.a-z0-9]*)\s*$", re.IGNORECASE)


def parse_version(text: str) -> HaVersion:
    """'2025.4', '2025.4.4', '2025.12.0b3' -> HaVersion; ValueError for anything else."""
    match = _VERSION_RE.match(text)
    if match is None:
        raise ValueError("not a Home Assistant version like 2025.4 or 2025.4.4")
    year, month = int(match.group(1)), int(match.group(2))
    if not 1 <= month <= 12 or year < 2000:
        raise ValueError("not a Home Assistant version like 2025.4 or 2025.4.4")
    return HaVersion(year, month)


def runs(intent: str, version: HaVersion) -> bool:
    """Whether Home Assistant ``version`` registers a handler for ``intent``."""
    since = SINCE.get(intent)
    return since is not None and version >= since.version
