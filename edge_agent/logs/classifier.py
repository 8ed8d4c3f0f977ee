"""Severity, category and anomaly of log lines: the model labels each *template* once (cached
by template id), then cheap per-line rules adjust for parameters that change the meaning
(non-zero exit codes, error codes, HTTP 5xx, temperatures or usage over a threshold) and for
the level the source itself gave."""

from __future__ import annotations

import math
import re
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from edge_agent.logs.labels import CATEGORIES, SEVERITIES
from edge_agent.logs.parse import ParsedLine, infer_severity
from edge_agent.logs.templates import TemplateMiner
from edge_agent.records.logs import LogLabel

__all__ = ["CATEGORY_MIN_P", "LineClassifier", "LogModel", "RuleModel", "pick_label", "severity_rank"]

_RANK = {name: i for i, name in enumerate(SEVERITIES)}
_MAX_MODEL_CHARS = 400
_BATCH = 32
_CALM_LEVELS = frozenset({"debug", "info", "notice"})
_CALM_FACTOR = 0.5
# below this probability the model's category is reported as "other": on logs unlike any it learnt
# from, a plain "other" is better than a confident wrong category
CATEGORY_MIN_P = 0.5
_EMPTY = LogLabel(severity="info", category="other", anomaly=False, score=0.0)


class _Encoded(Protocol):
    ids: npt.NDArray[np.int32]


class _Tokenizer(Protocol):
    def encode(self, text: str) -> Any: ...


class LogModel(Protocol):
    """What the classifier needs of ``edge_agent.runtime.model.Model``."""

    log_tokenizer: _Tokenizer  # the log graph's pieces (``Model.log_tokenizer``)
    labels: dict[str, list[str]]

    def run_logs(self, ids: npt.NDArray[np.int32]) -> tuple[Any, Any, Any]: ...


def severity_rank(severity: str) -> int:
    return _RANK.get(severity, _RANK["info"])


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


# ---- keyword fallback, used when no model bundle is installed ----------------------------------

_CATEGORY_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (c, re.compile(p, re.IGNORECASE))
    for c, p in (
        ("auth", r"\b(?:ssh\w*|sudo|login|logon|password|auth\w*|pam_\w+|user|certificate|session opened)\b"),
        ("thermal", r"\b(?:temp\w*|thermal|overheat\w*|fan|cooling|°C)\b"),
        ("power", r"\b(?:power\w*|battery|voltage|brown-?out|ups|undervolt\w*|suspend|resume)\b"),
        (
            "storage",
            r"\b(?:disk|ext4|mmc\w*|sd[a-z]\d?|nand|ubi\w*|filesystem|mount\w*|i/o error|block|fsck)\b",
        ),
        ("wireless", r"\b(?:wi-?fi|wlan\d*|ssid|80211|ble|bluetooth|zigbee|z-?wave|thread|wpa\w*|airport)\b"),
        ("bridge", r"\b(?:modbus|serial|tty\w+|uart|bridge|mqtt|coordinator|can\d|rs-?485)\b"),
        (
            "network",
            r"\b(?:eth\d*|link|dhcp\w*|dns|ip|tcp|udp|connection|proxy|route|socket|http\w*|network)\b",
        ),
        ("sensor", r"\b(?:sensor\w*|humidity|reading|probe|adc|i2c|spi)\b"),
        ("kernel", r"\b(?:kernel|oops|panic|irq|cpu\d*|dma|segfault|oom)\b"),
        ("service", r"\b(?:systemd|service|daemon|started|stopped|restart\w*|exited|init)\b"),
    )
)


class RuleModel:
    """Keyword labels for a message: the stand-in when no model bundle is installed."""

    def label(self, text: str) -> LogLabel:
        severity = infer_severity(text)
        category = next((c for c, p in _CATEGORY_WORDS if p.search(text)), "application")
        score = {"critical": 0.9, "error": 0.6, "warning": 0.3}.get(severity, 0.05)
        return LogLabel(severity=severity, category=category, anomaly=score >= 0.5, score=score)


# ---- parameters that change the meaning ---------------------------------------------------------

_EXIT = re.compile(
    r"\b(?:exit(?:ed)?(?:\s+with)?(?:\s+(?:code|status))?|return\s+code|rc|code=exited,\s*status)"
    r"[=: ]+(-?\d+)",
    re.I,
)
_ERRNO = re.compile(r"\b(?:error|err|errno|error code)[=: ]+\(?(-\d+|0x[0-9a-f]+|[1-9]\d*)\)?", re.I)
_HTTP = re.compile(r"\b(?:HTTP/\d(?:\.\d)?\"?\s+|status[=: ]+)([1-5]\d\d)\b")
_TEMP = re.compile(r"(-?\d+(?:\.\d+)?)\s?(?:°\s?C|degC|C\b|celsius)", re.I)
_TEMP_CONTEXT = re.compile(r"\b(?:temp\w*|thermal|cpu|soc|core|board|heat\w*)\b", re.I)
_PERCENT = re.compile(
    r"\b(?:disk|storage|memory|mem|ram|usage|used|full|cpu load)\D{0,20}?(\d{1,3}(?:\.\d+)?)\s?%", re.I
)


# any of the rules below needs a word that starts like one of these, or a percent sign
_FLAG_WORDS = re.compile(
    r"\b(?:temp|thermal|cpu|soc|core|board|heat|exit|return|rc|code|http|status|err)|%", re.I
)


def _param_flags(message: str, thresholds: tuple[float, float]) -> tuple[str, float, str | None] | None:
    """(severity, score, category) implied by a parameter value, or None."""
    if _FLAG_WORDS.search(message) is None:
        return None
    warn_c, crit_c = thresholds
    if _TEMP_CONTEXT.search(message):
        temps = [float(t) for t in _TEMP.findall(message)]
        if temps and max(temps) >= crit_c:
            return "critical", 0.95, "thermal"
        if temps and max(temps) >= warn_c:
            return "warning", 0.6, "thermal"
    m = _EXIT.search(message)
    if m and int(m.group(1)) != 0:
        return "error", 0.7, None
    m = _HTTP.search(message)
    if m and m.group(1).startswith("5"):
        return "error", 0.6, "network"
    m = _ERRNO.search(message)
    if m:
        return "error", 0.6, None
    pcts = [float(p) for p in _PERCENT.findall(message)]
    if pcts and max(pcts) >= 95:
        return "warning", 0.6, None
    return None


HEADS = ("severity", "category", "anomaly")
# a head is used when the bundle's manifest reports at least this for its int8 model
# (``metrics.student_int8``); below, keyword rules answer for that head. No metric: trusted.
HEAD_FLOORS = {
    "severity": ("severity_accuracy", 0.6),
    "category": ("category_accuracy", 0.5),
    "anomaly": ("anomaly_f1", 0.5),
}


def trusted_heads(model: object) -> frozenset[str]:
    """The log heads of ``model`` good enough to use, judged by its manifest's own metrics."""
    if model is None:
        return frozenset()
    manifest = getattr(getattr(model, "bundle", None), "manifest", None)
    metrics = manifest.get("metrics") if isinstance(manifest, dict) else None
    int8 = metrics.get("student_int8") if isinstance(metrics, dict) else None
    if not isinstance(int8, dict):
        return frozenset(HEADS)
    heads = set()
    for head, (key, floor) in HEAD_FLOORS.items():
        value = int8.get(key)
        if not isinstance(value, (int, float)) or value >= floor:
            heads.add(head)
    return frozenset(heads)


class LineClassifier:
    """Labels lines. With a model, each template is run through the model once and cached;
    without one (``model=None``) a keyword fallback labels the template. ``heads`` says which of
    the model's heads to use (default: those its manifest's metrics vouch for, see
    ``trusted_heads``); keyword rules answer for the others."""

    def __init__(
        self,
        model: LogModel | None = None,
        *,
        anomaly_threshold: float = 0.5,
        temperature_c: tuple[float, float] = (75.0, 90.0),
        cache_size: int = 20000,
        miner: TemplateMiner | None = None,
        heads: Sequence[str] | None = None,
    ) -> None:
        self._rules = RuleModel()
        self._threshold = anomaly_threshold
        self._temps = temperature_c
        self._cache: OrderedDict[tuple[int, str], LogLabel] = OrderedDict()
        self._cache_size = cache_size
        self.miner = miner if miner is not None else TemplateMiner()
        self.model_runs = 0
        self._use_model(model, heads)

    def _use_model(self, model: LogModel | None, heads: Sequence[str] | None) -> None:
        self._model = model
        self.heads = trusted_heads(model) if heads is None or model is None else frozenset(heads) & set(HEADS)
        if model is not None:
            self._sev_labels = list(model.labels.get("severity", SEVERITIES))
            self._cat_labels = list(model.labels.get("category", CATEGORIES))

    @property
    def has_model(self) -> bool:
        return self._model is not None

    def swap_model(self, model: LogModel | None, heads: Sequence[str] | None = None) -> None:
        """Label with ``model`` from now on (a newly activated bundle): its labels and trusted
        heads apply, and the per-template cache is cleared so no old model's label is served.
        Template ids are kept (the miner does not depend on the model)."""
        self._use_model(model, heads)
        self._cache.clear()

    def template_labels(self, items: Sequence[tuple[int, str, str]]) -> list[LogLabel]:
        """Labels of templates given as (template id, template text, example line); the model
        runs once per template not cached yet, batched."""
        missing = [(tid, tpl, ex) for tid, tpl, ex in items if (tid, tpl) not in self._cache and tpl.strip()]
        if missing:
            fresh = self._run(list({(t, p): e for t, p, e in missing}.items()))
            for key, label in fresh.items():
                self._cache[key] = label
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        out = []
        for tid, tpl, _ in items:
            if not tpl.strip():
                out.append(_EMPTY)
                continue
            self._cache.move_to_end((tid, tpl))
            out.append(self._cache[(tid, tpl)])
        return out

    def line_label(self, base: LogLabel, parsed: ParsedLine) -> tuple[LogLabel, str | None]:
        """The template's label adjusted for this line: the source's own level wins for
        severity; parameter values can raise severity and the anomaly score. Also returns the
        severity a parameter value gave the line (None: none did)."""
        severity, category, score = base.severity, base.category, base.score
        if parsed.level is not None:
            severity = parsed.level
        flag = _param_flags(parsed.message, self._temps)
        if flag is not None:
            sev, flag_score, cat = flag
            if severity_rank(sev) > severity_rank(severity):
                severity = sev
            if flag_score > score:
                score, category = flag_score, cat or category
        if parsed.level is not None and flag is None:
            if severity == "critical" and score < 0.5:
                score = 0.5
            elif parsed.level in _CALM_LEVELS:  # the source itself calls it routine
                score = round(score * _CALM_FACTOR, 4)
        anomaly = score >= self._threshold
        said = None if flag is None else flag[0]
        if (severity, category, score, anomaly) == (base.severity, base.category, base.score, base.anomaly):
            return base, said
        return LogLabel(severity, category, anomaly, score), said

    # -- model ---------------------------------------------------------------------------------

    def _run(self, items: list[tuple[tuple[int, str], str]]) -> dict[tuple[int, str], LogLabel]:
        if self._model is None or not self.heads:
            return {key: self._rules.label(example) for key, example in items}
        labels = self._run_model(items)
        return {key: self._with_rules(labels[key], example) for key, example in items}

    def _mix(self, model: LogLabel, rule: LogLabel) -> LogLabel:
        """The model's answer for the heads it is trusted with, the rules' for the others."""
        severity = model.severity if "severity" in self.heads else rule.severity
        category = model.category if "category" in self.heads else rule.category
        score = model.score if "anomaly" in self.heads else rule.score
        return LogLabel(severity=severity, category=category, anomaly=score >= self._threshold, score=score)

    def _with_rules(self, label: LogLabel, example: str) -> LogLabel:
        """Words that always mean critical (panic, OOM, segfault...) are not left to the model."""
        rule = self._rules.label(example)
        if len(self.heads) < len(HEADS):
            label = self._mix(label, rule)
        if rule.severity != "critical" or label.severity == "critical":
            return label
        score = max(label.score, rule.score)
        return LogLabel(
            severity="critical", category=label.category, anomaly=score >= self._threshold, score=score
        )

    def _run_model(self, items: list[tuple[tuple[int, str], str]]) -> dict[tuple[int, str], LogLabel]:
        assert self._model is not None
        out: dict[tuple[int, str], LogLabel] = {}
        for start in range(0, len(items), _BATCH):
            chunk = items[start : start + _BATCH]
            ids = np.stack([self._model.log_tokenizer.encode(ex[:_MAX_MODEL_CHARS]).ids for _, ex in chunk])
            sev, cat, anom = self._model.run_logs(ids.astype(np.int32))
            self.model_runs += len(chunk)
            for row, (key, _) in enumerate(chunk):
                score = _sigmoid(float(np.asarray(anom).reshape(-1)[row]))
                out[key] = LogLabel(
                    severity=pick_label(self._sev_labels, sev[row], "info"),
                    category=pick_label(self._cat_labels, cat[row], "other", CATEGORY_MIN_P),
                    anomaly=score >= self._threshold,
                    score=round(score, 4),
                )
        return out


def pick_label(labels: list[str], logits: Any, default: str, min_p: float = 0.0) -> str:
    """The most likely label of a head, or ``default`` when its probability is under ``min_p``."""
    z = np.asarray(logits, dtype=np.float64).reshape(-1)
    idx = int(np.argmax(z))
    if not 0 <= idx < len(labels):
        return default
    if min_p > 0.0 and 1.0 / float(np.exp(z - z[idx]).sum()) < min_p:
        return default
    return labels[idx]
