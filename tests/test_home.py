"""Home files and resolution of spoken names (exact, case-insensitive, fuzzy, raw fallback)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from edge_agent.config import parse
from edge_agent.errors import ConfigError
from edge_agent.nlu.home import DOMAINS, Home, HomeFileError
from edge_agent.nlu.slots.words import (
    BINARY_CLASSES,
    COVER_CLASS_WORDS,
    DOMAIN_WORDS,
    INTENT_DOMAINS,
    SENSOR_CLASSES,
    device_class_for,
)

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = Path(__file__).parent / "data" / "home_example.yaml"


@pytest.fixture(scope="module")
def home() -> Home:
    return Home.load(EXAMPLE)


def test_load_example(home: Home) -> None:
    assert "Kitchen" in home.areas
    assert home.floors == ["Upstairs", "Downstairs"]
    assert "Groceries" in home.lists
    tv = home.resolve_entity("TV")
    assert tv is not None and tv.domain == "media_player" and tv.area == "Living Room"


def test_resolve_entity_exact_case_and_articles(home: Home) -> None:
    assert home.resolve_name("Floor Lamp") == "Floor Lamp"
    assert home.resolve_name("floor lamp") == "Floor Lamp"
    assert home.resolve_name("the FLOOR LAMP") == "Floor Lamp"
    assert home.resolve_name("floor lamps") == "Floor Lamp"


def test_resolve_entity_alias(home: Home) -> None:
    assert home.resolve_name("telly") == "TV"
    assert home.resolve_name("island lights") == "Island Pendants"


def test_resolve_fuzzy_and_threshold(home: Home) -> None:
    assert home.resolve_name("reding lamp") == "Reading Lamp"
    assert home.resolve_area("kichen") == "Kitchen"
    assert home.resolve_name("garden gnome") is None
    assert home.resolve_area("room") is None
    assert home.resolve_area("kichen", fuzzy=False) is None


def test_resolve_floor_and_list(home: Home) -> None:
    assert home.resolve_floor("upstairs") == "Upstairs"
    assert home.resolve_list("hardware store") == "Hardware Store"
    assert home.resolve_list("chore") == "Chores"


def test_roundtrip_to_dict(home: Home) -> None:
    again = Home.from_dict(home.to_dict())
    assert again.areas == home.areas
    assert again.entities == home.entities


def test_same_name_entities_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "home.yaml"
    path.write_text(
        "entities:\n"
        "  - {name: Phone, domain: binary_sensor, device_class: battery}\n"
        "  - {name: Phone, domain: binary_sensor, device_class: connectivity}\n",
        encoding="utf-8",
    )
    home = Home.load(path)
    assert [e.device_class for e in home.entities_named("Phone")] == ["battery", "connectivity"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("areas: [Kitchen\n", "not valid YAML"),
        ("- just a list\n", "top level must be a mapping"),
        ("rooms: [Kitchen]\n", "unknown keys"),
        ("entities:\n  - {domain: light}\n", "name must be a non-empty string"),
        ("entities:\n  - {name: Lamp}\n", "domain must be a non-empty string"),
        ("entities:\n  - {name: Lamp, domain: light, colour: red}\n", "unknown keys"),
        ("areas: Kitchen\n", "areas must be a list"),
    ],
)
def test_bad_home_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "home.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(HomeFileError, match=message):
        Home.load(path)


def test_missing_and_non_utf8_files(tmp_path: Path) -> None:
    with pytest.raises(HomeFileError, match="cannot read"):
        Home.load(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"areas: [\xff\xfe]\n")
    with pytest.raises(HomeFileError, match="not UTF-8"):
        Home.load(bad)


def test_empty_file_is_an_empty_home(tmp_path: Path) -> None:
    path = tmp_path / "home.yaml"
    path.write_text("", encoding="utf-8")
    home = Home.load(path)
    assert home.areas == [] and home.resolve_area("kitchen") is None


def test_an_unknown_domain_is_refused_with_the_allowed_values(tmp_path: Path) -> None:
    path = tmp_path / "home.yaml"
    path.write_text("areas: [Hallway]\nentities:\n  - {name: Robbie, domain: vaccum, area: Hallway}\n")
    with pytest.raises(HomeFileError) as err:
        Home.load(path)
    message = str(err.value)
    assert "entities[0]" in message and "'vaccum'" in message and "did you mean 'vacuum'" in message
    assert all(domain in message for domain in DOMAINS)


def test_the_config_home_section_refuses_an_unknown_domain_too() -> None:
    with pytest.raises(ConfigError) as err:
        parse({"home": {"entities": [{"name": "Robbie", "domain": "vaccum"}]}})
    assert "home.entities.0.domain" in str(err.value) and "vacuum, valve" in str(err.value)


def test_every_domain_the_slot_code_names_is_allowed() -> None:
    named = set(DOMAIN_WORDS) | {d for ds in INTENT_DOMAINS.values() for d in ds}
    words = [w for table in (BINARY_CLASSES, SENSOR_CLASSES) for spoken, *_ in table.values() for w in spoken]
    words += [w for spoken in COVER_CLASS_WORDS.values() for w in spoken]
    classed = (device_class_for(w, "HassGetState", has_state=False) for w in words)
    named |= {domain for domain, _ in filter(None, classed)}
    assert named <= set(DOMAINS), named - set(DOMAINS)
    assert {"sensor", "binary_sensor"} <= named


def test_the_shipped_example_home_loads_and_resolves() -> None:
    home = Home.load(REPO / "configs" / "home.yaml")
    assert home.resolve_name("kitchen lights") == "Kitchen Lights"
    assert "Shopping List" in home.lists
    parse({"home": yaml.safe_load((REPO / "configs" / "home.yaml").read_text())})  # valid as a config section


def test_the_readme_example_works_with_the_shipped_home() -> None:
    """README "Using it": echo "turn off the kitchen lights" | edge-agent intents --home configs/home.yaml"""
    readme = (REPO / "README.md").read_text()
    assert 'echo "turn off the kitchen lights" | edge-agent intents --home configs/home.yaml' in readme
    proc = subprocess.run(
        [sys.executable, "-m", "edge_agent", "intents", "--home", "configs/home.yaml"],
        input=b"turn off the kitchen lights\n", capture_output=True, cwd=REPO, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    result = json.loads(proc.stdout)
    assert result["intent"] == "HassTurnOff"
    assert result["slots"]["name"]["value"] == "Kitchen Lights"
