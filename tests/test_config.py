"""Config loading: defaults, field-named errors, secrets, the CLI exit codes, the packaged schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from edge_agent.config import Config, json_schema, load, parse
from edge_agent.errors import ConfigError
from edge_agent.messages import load_schema

REPO = Path(__file__).resolve().parent.parent


def write(tmp_path: Path, data: object, name: str = "agent.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def test_defaults() -> None:
    config = parse({})
    assert config.site_id == "default"
    assert config.mqtt.protocol == "5"
    assert config.mqtt.port == 1883
    assert config.topics.prefix == "edge"
    assert config.client_id == "edge-agent-default"
    assert config.model.bundle is None


def test_shipped_default_yaml_is_valid_and_matches_defaults() -> None:
    config = load(REPO / "configs" / "default.yaml")
    assert config.model_dump() == Config.model_validate({}).model_dump()


@pytest.mark.parametrize(
    ("data", "field", "allowed"),
    [
        ({"mqtt": {"port": 70000}}, "mqtt.port", "65535"),
        ({"mqtt": {"protocol": "4"}}, "mqtt.protocol", "'5' or '3.1.1'"),
        ({"mqtt": {"hostname": "x"}}, "mqtt.hostname", "allowed keys here: bulk_session, client_id, host,"),
        ({"colour": "red"}, "colour", "allowed keys here:"),
        ({"topics": {"prefix": "a/#"}}, "topics.prefix", "wildcards"),
        ({"site_id": "kitchen/1"}, "site_id", "letters, digits"),
        ({"home": {"entities": [{"name": "lamp"}]}}, "home.entities.0.domain", "Field required"),
        ({"mqtt": {"tls": {"cert_file": "c.pem"}}}, "mqtt.tls.key_file", "set together"),
        (
            {"mqtt": {"reconnect_min_s": 5, "reconnect_max_s": 1}},
            "mqtt.reconnect_max_s",
            ">= reconnect_min_s",
        ),
        ({"pipeline": {"queue_size": 0}}, "pipeline.queue_size", "greater than or equal to 1"),
        ({"runtime": {"backend": "cuda"}}, "runtime.backend", "'auto', 'tflite-runtime' or 'litert'"),
        ({"model": {"backend": "auto"}}, "model.backend", "set runtime.backend instead"),
        ({"runtime": {"delegates": [{"kind": "gpu"}]}}, "runtime.delegates.0", "'cpu', 'edgetpu'"),
        ({"runtime": {"residency": "auto"}}, "runtime", "needs runtime.weight_budget_mb"),
        ({"runtime": {"cpu": {"quota": 0}}}, "runtime.cpu.quota", "greater than 0"),
        ({"mqtt": {"protocol": "3.1.1", "shared_group": "g"}}, "mqtt.shared_group", 'protocol "5"'),
        ({"mqtt": {"shared_group": "a/b"}}, "mqtt.shared_group", "one topic level"),
        ({"intents": {"custom_sentences": "one.yaml"}}, "intents.custom_sentences", "valid list"),
        ({"intents": {"sentences": []}}, "intents.sentences", "allowed keys here: custom_sentences"),
    ],
)
def test_errors_name_the_field_and_what_is_allowed(data: dict[str, object], field: str, allowed: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse(data)
    line = next(ln for ln in str(info.value).splitlines() if ln.strip().startswith(field + ":"))
    assert allowed in line


@pytest.mark.parametrize(
    ("data", "field", "guess"),
    [
        ({"mqtt": {"hostname": "x"}}, "mqtt.hostname", "did you mean 'host'?"),
        ({"mqtt": {"keepalive": 30}}, "mqtt.keepalive", "did you mean 'keepalive_s'?"),
        ({"sla": {"thermal_pth": None}}, "sla.thermal_pth", "did you mean 'thermal_path'?"),
        ({"runtim": {}}, "runtim", "did you mean 'runtime'?"),
    ],
)
def test_unknown_key_names_the_closest_allowed_one(data: dict[str, object], field: str, guess: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse(data)
    line = next(ln for ln in str(info.value).splitlines() if ln.strip().startswith(field + ":"))
    assert guess in line and "allowed keys here:" in line


def test_unknown_key_far_from_every_allowed_one_gets_no_guess() -> None:
    with pytest.raises(ConfigError) as info:
        parse({"mqtt": {"zzzz": 1}})
    line = next(ln for ln in str(info.value).splitlines() if ln.strip().startswith("mqtt.zzzz:"))
    assert "did you mean" not in line and "allowed keys here: bulk_session" in line


def test_protocol_accepts_number_five_and_text_311() -> None:
    assert parse({"mqtt": {"protocol": 5}}).mqtt.protocol == "5"
    assert parse(yaml.safe_load("mqtt: {protocol: 3.1.1}")).mqtt.protocol == "3.1.1"


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load(write(tmp_path, "- a\n- b\n"))


def test_invalid_yaml_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid YAML"):
        load(write(tmp_path, "mqtt: [unclosed\n"))
    with pytest.raises(ConfigError, match="cannot read config file"):
        load(tmp_path / "absent.yaml")


def test_password_file_relative_to_credentials_directory(tmp_path: Path) -> None:
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "broker_pw").write_text("s3cret\nignored\n", encoding="utf-8")
    (creds / "broker_pw").chmod(0o600)
    path = write(tmp_path, {"mqtt": {"username": "u", "password_file": "broker_pw"}})
    config = load(path, environ={"CREDENTIALS_DIRECTORY": str(creds)})
    assert config.mqtt.password == "s3cret"
    assert "s3cret" not in json.dumps(config.model_dump(mode="json"))


def test_default_credential_name_is_used_when_present(tmp_path: Path) -> None:
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "mqtt_password").write_text("from-systemd", encoding="utf-8")
    (creds / "mqtt_password").chmod(0o400)
    config = load(write(tmp_path, {"mqtt": {"username": "u"}}), environ={"CREDENTIALS_DIRECTORY": str(creds)})
    assert config.mqtt.password == "from-systemd"
    assert load(write(tmp_path, {}), environ={}).mqtt.password is None


def test_world_readable_or_empty_password_file_is_refused(tmp_path: Path) -> None:
    pw = tmp_path / "pw"
    pw.write_text("x\n", encoding="utf-8")
    pw.chmod(0o644)
    path = write(tmp_path, {"mqtt": {"password_file": str(pw)}})
    with pytest.raises(ConfigError, match=r"mqtt\.password_file: .* readable by everyone"):
        load(path, environ={})
    pw.write_text("", encoding="utf-8")
    pw.chmod(0o600)
    with pytest.raises(ConfigError, match=r"mqtt\.password_file: .* empty"):
        load(path, environ={})


def test_home_assistant_token_is_read_like_a_secret(tmp_path: Path) -> None:
    token = tmp_path / "ha_token"
    token.write_text("eyJ.token.part \n", encoding="utf-8")
    token.chmod(0o600)
    url = "http://homeassistant.local:8123/"
    config = load(write(tmp_path, {"wyoming": {"ha_url": url, "ha_token_file": "ha_token"}}), environ={})
    assert config.wyoming.ha_token == "eyJ.token.part"
    assert config.wyoming.ha_url == "http://homeassistant.local:8123"
    assert "eyJ" not in json.dumps(config.model_dump(mode="json")) and "eyJ" not in repr(config)
    # the systemd credential name, without ha_token_file
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "ha_token").write_text("from-systemd\n", encoding="utf-8")
    (creds / "ha_token").chmod(0o400)
    env = {"CREDENTIALS_DIRECTORY": str(creds)}
    config = load(write(tmp_path, {"wyoming": {"ha_url": url}}), environ=env)
    assert config.wyoming.ha_token == "from-systemd"
    assert load(write(tmp_path, {}), environ={}).wyoming.ha_token is None


def test_home_assistant_settings_are_refused_with_the_field_named(tmp_path: Path) -> None:
    url = "http://homeassistant.local:8123"
    with pytest.raises(ConfigError, match=r"wyoming\.ha_token_file: wyoming\.ha_url is set but no token"):
        load(write(tmp_path, {"wyoming": {"ha_url": url}}), environ={})
    token = tmp_path / "open_token"
    token.write_text("t\n", encoding="utf-8")
    token.chmod(0o644)
    with pytest.raises(ConfigError, match=r"wyoming\.ha_token_file: .* readable by everyone"):
        load(write(tmp_path, {"wyoming": {"ha_url": url, "ha_token_file": str(token)}}), environ={})
    for section, field in (
        ({"ha_version": "2025.13"}, "wyoming.ha_version"),
        ({"ha_version": "latest"}, "wyoming.ha_version"),
        ({"ha_url": "homeassistant.local:8123"}, "wyoming.ha_url"),
        ({"ha_url": "http://user:pw@ha:8123"}, "wyoming.ha_url"),
        ({"ha_token_file": "t"}, "wyoming.ha_token_file"),
        ({"ha_timeout_s": 0}, "wyoming.ha_timeout_s"),
    ):
        with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
            parse({"wyoming": section})
    assert parse({"wyoming": {"ha_version": "2025.4.4"}}).wyoming.ha_version == "2025.4.4"


def test_relative_paths_are_relative_to_the_config_file(tmp_path: Path) -> None:
    data = {"mqtt": {"tls": {"ca_file": "ca.crt"}}, "model": {"bundle": "bundles/b1"}}
    config = load(write(tmp_path, data), environ={})
    assert config.mqtt.tls is not None
    assert config.mqtt.tls.ca_file == tmp_path / "ca.crt"
    assert config.model.bundle == tmp_path / "bundles" / "b1"


def test_custom_sentences_paths_are_relative_to_the_config_and_must_exist(tmp_path: Path) -> None:
    (tmp_path / "custom").mkdir()
    (tmp_path / "mine.yaml").write_text("language: en\n")
    config = load(write(tmp_path, {"intents": {"custom_sentences": ["custom", "mine.yaml"]}}), environ={})
    assert config.intents.custom_sentences == [tmp_path / "custom", tmp_path / "mine.yaml"]
    with pytest.raises(ConfigError) as info:
        load(write(tmp_path, {"intents": {"custom_sentences": ["mine.yaml", "gone"]}}), environ={})
    assert "intents.custom_sentences[1]" in str(info.value) and "does not exist" in str(info.value)


def test_packaged_schema_is_current_and_validates_default_yaml() -> None:
    packaged = load_schema("config")
    assert packaged == json.loads(json.dumps(json_schema()))
    data = yaml.safe_load((REPO / "configs" / "default.yaml").read_text(encoding="utf-8"))
    jsonschema.validate(data, packaged)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"mqtt": {"port": 0}}, packaged)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "edge_agent", *args], capture_output=True, text=True, cwd=REPO, timeout=60
    )


def test_check_config_cli_exit_codes(tmp_path: Path) -> None:
    ok = run_cli("check-config", str(REPO / "configs" / "default.yaml"))
    assert ok.returncode == 0, ok.stderr
    assert "valid" in ok.stdout
    bad = run_cli("check-config", str(write(tmp_path, {"mqtt": {"port": "eighty"}})))
    assert bad.returncode == 2
    assert "mqtt.port:" in bad.stderr
    assert "valid integer" in bad.stderr


def test_run_with_invalid_config_exits_2(tmp_path: Path) -> None:
    result = run_cli("run", "--config", str(write(tmp_path, {"pipeline": {"workers": 0}})))
    assert result.returncode == 2
    assert "pipeline.workers:" in result.stderr


def test_relative_password_file_next_to_the_config_without_systemd(tmp_path: Path) -> None:
    (tmp_path / "pw").write_text("beside\n", encoding="utf-8")
    (tmp_path / "pw").chmod(0o600)
    config = load(write(tmp_path, {"mqtt": {"password_file": "pw"}}), environ={})
    assert config.mqtt.password == "beside"
