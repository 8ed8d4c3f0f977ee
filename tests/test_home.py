"""Home files and resolution of spoken names (exact, case-insensitive, fuzzy, raw fallback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from edge_agent.nlu.home import Home, HomeFileError

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
