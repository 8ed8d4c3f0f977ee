"""Typed agent configuration: one YAML file, validated when loaded.

Every section is a pydantic model with ``extra="forbid"``, bounds and a description; ``Config``
holds one field per section, so a new section is one model plus one line in ``Config``.
Secrets (the MQTT password, Home Assistant's access token) are read by :func:`load`, never at
import time.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import stat
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from edge_agent.bridges.control_config import ControlConfig
from edge_agent.bridges.hermes_config import HermesConfig
from edge_agent.bridges.homeassistant_config import HomeAssistantConfig
from edge_agent.bridges.wyoming_config import WyomingConfig
from edge_agent.errors import ConfigError
from edge_agent.logs.config import LogsConfig
from edge_agent.nlu.home import DOMAINS
from edge_agent.runtime.config import RuntimeConfig
from edge_agent.runtime.sla import SlaConfig
from edge_agent.store.config import ReliabilityConfig

__all__ = [
    "CREDENTIALS_ENV",
    "Config",
    "HomeConfig",
    "HomeEntity",
    "IntentsConfig",
    "LogsConfig",
    "ModelConfig",
    "MqttConfig",
    "PipelineConfig",
    "RuntimeConfig",
    "SlaConfig",
    "TlsConfig",
    "TopicsConfig",
    "format_validation_error",
    "json_schema",
    "load",
    "parse",
]

CREDENTIALS_ENV = "CREDENTIALS_DIRECTORY"
_DEFAULT_CREDENTIAL = "mqtt_password"
_HA_TOKEN_CREDENTIAL = "ha_token"  # Home Assistant access token (wyoming.ha_url)
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_TOPIC_FORBIDDEN = ("+", "#", "\x00")
# keys that moved to another section: the error names the new place
_MOVED: dict[tuple[str, ...], str] = {
    ("model", "backend"): "runtime.backend",
    ("model", "threads"): "runtime.threads",
}


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


class TlsConfig(_Section):
    """TLS towards the broker. The server certificate is always verified against ``ca_file``
    (or the system store when it is unset); ``cert_file`` + ``key_file`` add a client certificate."""

    ca_file: Path | None = Field(None, description="CA bundle (PEM) that signed the broker's certificate")
    cert_file: Path | None = Field(None, description="client certificate (PEM) for mutual TLS")
    key_file: Path | None = Field(None, description="private key (PEM) of cert_file")

    @field_validator("key_file")
    @classmethod
    def _pair(cls, value: Path | None, info: Any) -> Path | None:
        cert = info.data.get("cert_file")
        if (cert is None) != (value is None):
            raise ValueError("cert_file and key_file must be set together")
        return value


class MqttConfig(_Section):
    """Connection to the MQTT broker."""

    host: str = Field("127.0.0.1", min_length=1, description="broker host name or address")
    port: int = Field(1883, ge=1, le=65535, description="broker TCP port")
    protocol: Literal["5", "3.1.1"] = Field("5", description='MQTT protocol version: 5 or "3.1.1"')
    username: str | None = Field(None, min_length=1, description="user name for password authentication")
    password_file: Path | None = Field(
        None,
        description="file holding the password (first line); a relative name is looked up in "
        "$CREDENTIALS_DIRECTORY (systemd LoadCredential=). Without it, the credential "
        "'mqtt_password' is used when present",
    )
    client_id: str | None = Field(
        None, min_length=1, max_length=128, description="client id; default edge-agent-<site_id>"
    )
    session_expiry_s: int = Field(
        86400, ge=0, le=4294967295, description="how long the broker keeps the session (and queued inputs)"
    )
    keepalive_s: int = Field(30, ge=5, le=3600, description="MQTT keepalive interval")
    reconnect_min_s: float = Field(0.5, gt=0, le=60, description="first reconnect delay")
    reconnect_max_s: float = Field(30.0, gt=0, le=3600, description="reconnect delay cap")
    max_inflight: int = Field(100, ge=1, le=65535, description="result publishes awaiting PUBACK at once")
    tls: TlsConfig | None = Field(None, description="enable TLS (omit for plain TCP)")
    shared_group: str | None = Field(
        None,
        description="MQTT 5 shared subscription group: agents with the same group split the inputs "
        "($share/<group>/<filter>)",
    )
    bulk_session: bool = Field(
        True,
        description="log lines arrive on a second MQTT session (client id <client_id>-bulk), so a "
        "flood of them never holds back a transcript at the broker",
    )

    _password: str | None = PrivateAttr(default=None)

    @field_validator("protocol", mode="before")
    @classmethod
    def _protocol_text(cls, value: object) -> object:
        if value == 5 or value == 5.0:
            return "5"
        return value

    @field_validator("reconnect_max_s")
    @classmethod
    def _cap(cls, value: float, info: Any) -> float:
        low = info.data.get("reconnect_min_s")
        if low is not None and value < low:
            raise ValueError(f"must be >= reconnect_min_s ({low})")
        return value

    @field_validator("shared_group")
    @classmethod
    def _group(cls, value: str | None, info: Any) -> str | None:
        if value is None:
            return value
        if not value or any(ch in value for ch in ("/", "+", "#", "\x00")):
            raise ValueError("must be one topic level without '/', '+' or '#'")
        if info.data.get("protocol") != "5":
            raise ValueError('shared subscriptions need mqtt.protocol "5"')
        return value

    @property
    def password(self) -> str | None:
        """The password read by :func:`load` (never part of the model's dump)."""
        return self._password


class TopicsConfig(_Section):
    """Topic layout: everything lives under ``{prefix}/{site_id}/``."""

    prefix: str = Field("edge", min_length=1, max_length=64, description="first topic level(s)")

    @field_validator("prefix")
    @classmethod
    def _valid_prefix(cls, value: str) -> str:
        if any(ch in value for ch in _TOPIC_FORBIDDEN):
            raise ValueError("must not contain the wildcards '+' or '#' or NUL")
        if value.startswith("/") or value.endswith("/") or "//" in value:
            raise ValueError("must not start or end with '/' nor contain empty levels")
        if value.startswith("$"):
            raise ValueError("must not start with '$' (reserved for the broker)")
        return value


class HomeEntity(_Section):
    """One device of the home (same shape as the ``--home`` YAML file)."""

    name: str = Field(..., min_length=1, description="entity name as people say it")
    domain: str = Field(
        ..., description="Home Assistant domain, e.g. light, cover", json_schema_extra={"enum": list(DOMAINS)}
    )
    area: str | None = Field(None, description="area the entity is in")
    device_class: str | None = Field(None, description="Home Assistant device class, e.g. window")
    aliases: list[str] = Field(default_factory=list, description="other names of the entity")

    @field_validator("domain")
    @classmethod
    def _known_domain(cls, value: str) -> str:
        if value not in DOMAINS:
            raise ValueError(f"unknown domain {value!r}; use one of {', '.join(DOMAINS)}")
        return value


class HomeConfig(_Section):
    """Areas, entities and lists used to resolve names in recognized intents."""

    areas: list[str] = Field(default_factory=list, description="area names")
    floors: list[str] = Field(default_factory=list, description="floor names")
    entities: list[HomeEntity] = Field(default_factory=list, description="devices")
    lists: list[str] = Field(default_factory=list, description="todo / shopping list names")


class ModelConfig(_Section):
    """Which model bundle is served (how it runs: the ``runtime`` section)."""

    bundle: Path | None = Field(
        None, description="bundle directory; default: the bundle shipped in the package"
    )


class IntentsConfig(_Section):
    """Intent recognition beyond the bundle: the user's own intents (docs/intents.md, "Custom intents")."""

    custom_sentences: list[Path] = Field(
        default_factory=list,
        max_length=64,
        description="Home Assistant custom-sentences YAML files, or directories of *.yaml, with the "
        "user's own intents; relative to this file. Reloaded on SIGHUP and on the control command "
        "'reload'; a file that cannot be used is logged and the previous intents stay. Needs a "
        "bundle with a sentence embedding",
    )

    @field_validator("custom_sentences")
    @classmethod
    def _paths(cls, value: list[Path]) -> list[Path]:
        for path in value:
            if not str(path).strip():
                raise ValueError("a path must not be empty")
        return value


class PipelineConfig(_Section):
    """Queue between the network thread and the workers."""

    queue_size: int = Field(256, ge=1, le=1_000_000, description="bounded queue capacity (messages)")
    workers: int = Field(1, ge=1, le=64, description="worker threads")
    transcript_batch_max: int = Field(16, ge=1, le=1024, description="transcripts taken per model call")
    log_batch_max: int = Field(256, ge=1, le=100_000, description="log messages taken per micro-batch")
    log_batch_wait_ms: int = Field(20, ge=0, le=10_000, description="how long a log batch waits to fill")
    max_payload_bytes: int = Field(
        65536, ge=64, le=16 * 1024 * 1024, description="larger inputs go to the DLQ"
    )
    dlq_payload_max_bytes: int = Field(
        4096, ge=0, le=1024 * 1024, description="bytes of the original payload kept in a DLQ record"
    )
    stats_interval_s: float = Field(30.0, ge=0, le=86400, description="stats period; 0 disables")
    tick_interval_s: float = Field(1.0, gt=0, le=3600, description="period of time-based log windows")
    drain_timeout_s: float = Field(15.0, ge=0, le=3600, description="time allowed to drain on SIGTERM")


class Config(_Section):
    """The whole agent configuration. One field per section."""

    site_id: str = Field("default", description="this gateway's site id (a topic level)")
    mqtt: MqttConfig = Field(default_factory=lambda: MqttConfig.model_validate({}))
    topics: TopicsConfig = Field(default_factory=lambda: TopicsConfig.model_validate({}))
    home: HomeConfig = Field(default_factory=HomeConfig)
    model: ModelConfig = Field(default_factory=lambda: ModelConfig.model_validate({}))
    intents: IntentsConfig = Field(
        default_factory=lambda: IntentsConfig.model_validate({}),
        description="the user's own intents from custom-sentences files (docs/intents.md)",
    )
    runtime: RuntimeConfig = Field(
        default_factory=lambda: RuntimeConfig.model_validate({}),
        description="backend, delegate preference list, weight residency, CPU quota (docs/runtime.md)",
    )
    pipeline: PipelineConfig = Field(default_factory=lambda: PipelineConfig.model_validate({}))
    logs: LogsConfig = Field(default_factory=lambda: LogsConfig.model_validate({}))
    hermes: HermesConfig = Field(default_factory=lambda: HermesConfig.model_validate({}))
    homeassistant: HomeAssistantConfig = Field(default_factory=lambda: HomeAssistantConfig.model_validate({}))
    control: ControlConfig = Field(default_factory=lambda: ControlConfig.model_validate({}))
    wyoming: WyomingConfig = Field(
        default_factory=lambda: WyomingConfig.model_validate({}),
        description="Wyoming intent and handle service for Home Assistant (docs/home-assistant.md)",
    )
    reliability: ReliabilityConfig = Field(default_factory=lambda: ReliabilityConfig.model_validate({}))
    sla: SlaConfig = Field(
        default_factory=lambda: SlaConfig.model_validate({}),
        description="latency budgets and thermal limit of the degradation ladder (docs/sla.md)",
    )

    @field_validator("site_id")
    @classmethod
    def _valid_site(cls, value: str) -> str:
        if not _ID_RE.match(value):
            raise ValueError(
                "must be 1-64 characters of letters, digits, '_', '-', '.', starting alphanumeric"
            )
        return value

    @property
    def client_id(self) -> str:
        return self.mqtt.client_id or f"edge-agent-{self.site_id}"


def format_validation_error(exc: ValidationError, source: str = "config") -> str:
    """One line per problem: the dotted field path and what is allowed."""
    lines = [f"{source}: {exc.error_count()} invalid value(s)"]
    for err in exc.errors():
        loc = ".".join(str(part) for part in err["loc"]) or "(top level)"
        lines.append(f"  {loc}: {_describe(err)}")
    return "\n".join(lines)


def _describe(err: Any) -> str:
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        moved = _MOVED.get(tuple(str(part) for part in err["loc"]))
        if moved is not None:
            return f"moved: set {moved} instead (docs/runtime.md)"
        allowed = _allowed_keys(err["loc"][:-1])
        close = difflib.get_close_matches(str(err["loc"][-1]), allowed, n=1)
        guess = f"did you mean {close[0]!r}? " if close else ""
        return f"unknown key; {guess}allowed keys here: {', '.join(allowed)}"
    msg = str(err.get("msg", "invalid"))
    msg = msg.removeprefix("Value error, ")
    if "input" in err and kind not in ("missing",):
        shown = repr(err["input"])
        if len(shown) > 60:
            shown = shown[:57] + "..."
        msg = f"{msg} (got {shown})"
    return msg


def _allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    model: type[BaseModel] = Config
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            break
        inner = _model_of(field.annotation)
        if inner is None:
            break
        model = inner
    return sorted(model.model_fields)


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def parse(data: object, source: str = "config") -> Config:
    """Validate an already-parsed mapping (no secrets are read)."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping of sections, got {type(data).__name__}")
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, source)) from None


def load(path: str | Path, environ: dict[str, str] | None = None) -> Config:
    """Read, validate and resolve a config file; reads the MQTT password and Home Assistant's
    access token if they are configured."""
    path = Path(path)
    env = dict(os.environ) if environ is None else environ
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    config = parse(data, str(path))
    _resolve_relative(config, path.parent)
    _check_custom_sentences(config, path)
    config.mqtt._password = _read_password(config.mqtt, env, path.parent)
    config.wyoming._ha_token = _read_ha_token(config.wyoming, env, path.parent)
    return config


def _resolve_relative(config: Config, base: Path) -> None:
    """Paths in the file are relative to the file's directory (password_file: see _read_password)."""
    tls = config.mqtt.tls
    if tls is not None:
        for name in ("ca_file", "cert_file", "key_file"):
            value = getattr(tls, name)
            if value is not None and not value.is_absolute():
                setattr(tls, name, base / value)
    if config.model.bundle is not None and not config.model.bundle.is_absolute():
        config.model.bundle = base / config.model.bundle
    rel = config.reliability
    if rel.state_dir is not None and not rel.state_dir.is_absolute():
        rel.state_dir = base / rel.state_dir
    if rel.bundles.trust_store is not None and not rel.bundles.trust_store.is_absolute():
        rel.bundles.trust_store = base / rel.bundles.trust_store
    rel.bundles.install_from = [p if p.is_absolute() else base / p for p in rel.bundles.install_from]
    if config.sla.thermal_path is not None and not config.sla.thermal_path.is_absolute():
        config.sla.thermal_path = base / config.sla.thermal_path
    sentences = config.intents.custom_sentences
    config.intents.custom_sentences = [p if p.is_absolute() else base / p for p in sentences]


def _check_custom_sentences(config: Config, source: Path) -> None:
    """Every ``intents.custom_sentences`` path names an existing file or directory (what the files
    say is checked when they are loaded: a broken file is logged, never a reason not to start)."""
    for i, path in enumerate(config.intents.custom_sentences):
        if not path.exists():
            raise ConfigError(
                f"{source}: intents.custom_sentences[{i}]: {path} does not exist; give a custom-sentences "
                "YAML file or a directory of them (relative paths are relative to the config file)"
            )


def _read_password(mqtt: MqttConfig, env: dict[str, str], base: Path | None = None) -> str | None:
    return _read_secret("mqtt.password_file", mqtt.password_file, _DEFAULT_CREDENTIAL, env, base, "password")


def _read_ha_token(wyoming: WyomingConfig, env: dict[str, str], base: Path | None = None) -> str | None:
    """Home Assistant's access token for ``wyoming.ha_url`` (None without an ha_url)."""
    if wyoming.ha_url is None:
        return None
    field = "wyoming.ha_token_file"
    token = _read_secret(field, wyoming.ha_token_file, _HA_TOKEN_CREDENTIAL, env, base, "token")
    if token is None:
        raise ConfigError(
            "wyoming.ha_token_file: wyoming.ha_url is set but no token was found; create a long-lived "
            f"access token in Home Assistant (your profile -> Security) and put it in a file named by "
            f"ha_token_file, or in ${CREDENTIALS_ENV}/{_HA_TOKEN_CREDENTIAL}"
        )
    return token


def _read_secret(
    field: str, path: Path | None, default_name: str, env: dict[str, str], base: Path | None, what: str
) -> str | None:
    """The first line of a secret file: ``path`` (relative: to $CREDENTIALS_DIRECTORY, else to
    ``base``), else ``$CREDENTIALS_DIRECTORY/<default_name>`` when it exists; None when neither."""
    cred_dir = env.get(CREDENTIALS_ENV)
    candidate: Path | None = None
    if path is not None:
        candidate = path
        if not candidate.is_absolute() and cred_dir:
            candidate = Path(cred_dir) / candidate
        elif not candidate.is_absolute() and base is not None:
            candidate = base / candidate
    elif cred_dir and (Path(cred_dir) / default_name).is_file():
        candidate = Path(cred_dir) / default_name
    if candidate is None:
        return None
    try:
        mode = candidate.stat().st_mode
        if mode & stat.S_IROTH:
            raise ConfigError(f"{field}: {candidate} is readable by everyone; chmod o-r it (e.g. 0600)")
        first = candidate.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"{field}: cannot read {candidate}: {exc.strerror}") from None
    # a password is taken as written; a token never holds spaces (a trailing one is an editor's)
    value = (first[0] if what == "password" else first[0].strip()) if first else ""
    if not value:
        raise ConfigError(f"{field}: {candidate} is empty; the first line must hold the {what}")
    return value


def json_schema() -> dict[str, Any]:
    """JSON schema of the config file (what ``edge_agent/schemas/config.schema.json`` holds)."""
    schema = Config.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://edge-agent.invalid/schemas/config.schema.json"
    return schema


if __name__ == "__main__":  # regenerate the packaged schema: python -m edge_agent.config
    out = Path(__file__).with_name("schemas") / "config.schema.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(json_schema(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(out)
