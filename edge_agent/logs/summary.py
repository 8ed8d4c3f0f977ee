"""Per-source windows: counts, top/new/surging templates, anomalies, and the headline.

The headline is for a person: its counts are the summary's ``severity_counts``, a template's
placeholder shows its value when (nearly) every line of the window had the same one there
(``Starting MariaDB 10.11.6`` rather than ``Starting MariaDB <*>``), and text is shortened by
whole words, never inside a word or a quoted phrase (``edge_agent.messages.text``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from edge_agent.logs.config import LogsConfig
from edge_agent.logs.labels import LOUD, SEVERITIES
from edge_agent.logs.masking import PARAM
from edge_agent.logs.templates import template_params
from edge_agent.logs.values import ValueCounts
from edge_agent.messages.summary import SummaryMessage
from edge_agent.messages.text import shorten
from edge_agent.records.logs import LogLabel

__all__ = ["SourceWindow", "TemplateInfo", "headline"]

_MAX_EXAMPLE = 300
_MAX_NEW = 10
_MAX_SURGING = 10
_MIN_BASELINE = 1e-6
_DROP_BASELINE = 1e-4
# the kind of value a headline names, most telling first, and its plural
_STORY_KINDS = (("ip", "IPs"), ("host", "hosts"), ("user", "users"), ("device", "devices"), ("unit", "units"))
# a placeholder shows its value when at least this share of the template's lines had that value
SAME_VALUE_SHARE = 0.9
_SETTLE_LINES = 10
HEADLINE_CHARS = 160
_STORY_CHARS = 90
_PART_CHARS = 48


@dataclass(slots=True)
class _Slots:
    """The values at a template's placeholders in a window: the first line's, and how many lines
    had the same value at each placeholder. Once every placeholder has varied on more than a
    tenth of ``_SETTLE_LINES`` or more lines, the template stops being watched (``active``): it
    will be shown with its placeholders, and its lines cost nothing more."""

    template: str
    message: str
    first: tuple[str, ...]
    same: list[int]
    lines: int = 1
    active: bool = True

    def add(self, message: str, template: str) -> None:
        self.lines += 1
        if message == self.message:
            self.same = [n + 1 for n in self.same]
            return
        values = template_params(message, template)
        if len(values) == len(self.first):
            for i, value in enumerate(values):
                if value == self.first[i]:
                    self.same[i] += 1
        if self.lines >= _SETTLE_LINES and all(n < SAME_VALUE_SHARE * self.lines for n in self.same):
            self.active = False

    def text(self, template: str) -> str:
        """``template`` with the placeholders whose value (nearly) never changed filled in."""
        if template != self.template or not self.first or not self.active:
            return template
        words = template.split()
        k = 0
        for i, word in enumerate(words):
            if word == PARAM:
                if self.same[k] >= SAME_VALUE_SHARE * self.lines:
                    words[i] = self.first[k]
                k += 1
        return " ".join(words)


@dataclass(frozen=True, slots=True)
class TemplateInfo:
    """What a window needs to know about a template when it closes."""

    template: str
    label: LogLabel


@dataclass
class SourceWindow:
    """The open window of one source plus the source's per-template rate baselines."""

    source: str
    start: float
    lines: int = 0
    truncated: int = 0
    severities: Counter[str] = field(default_factory=Counter)
    counts: Counter[int] = field(default_factory=Counter)
    examples: dict[int, str] = field(default_factory=dict)
    new_ids: set[int] = field(default_factory=set)
    anomalies: list[dict[str, Any]] = field(default_factory=list)
    anomaly_count: int = 0
    baseline: dict[int, float] = field(default_factory=dict)
    values: dict[int, ValueCounts] = field(default_factory=dict)
    loud_lines: Counter[int] = field(default_factory=Counter)
    severe_lines: Counter[int] = field(default_factory=Counter)
    slots: dict[int, _Slots] = field(default_factory=dict)
    incident_lines: Counter[int] = field(default_factory=Counter)
    last_seen: float = 0.0

    def add(
        self,
        template_id: int,
        new: bool,
        label: LogLabel,
        line: str,
        truncated: bool,
        max_anomalies: int,
        values: list[tuple[str, str]] | None = None,
        said: str | None = None,
        message: str = "",
        template: str = "",
        incident: int | None = None,
        opens: bool = False,
    ) -> None:
        self.lines += 1
        if incident is not None:
            self.incident_lines[incident] += 1
        if PARAM in template:
            self._slot(template_id, template, message)
        if said in LOUD:
            self.loud_lines[template_id] += 1
            self.severe_lines[template_id] += said != "warning"
        if values:
            self.values_of(template_id).add(values)
        self.truncated += truncated
        self.severities[label.severity] += 1
        self.counts[template_id] += 1
        self.examples.setdefault(template_id, line[:_MAX_EXAMPLE])
        if new:
            self.new_ids.add(template_id)
        if label.anomaly:
            self.anomaly_count += 1
            self._keep_anomaly(template_id, label, line, max_anomalies, incident, opens)

    def _slot(self, template_id: int, template: str, message: str) -> None:
        slots = self.slots.get(template_id)
        if slots is None or slots.template != template:
            params = template_params(message, template)
            self.slots[template_id] = _Slots(template, message, params, [1] * len(params))
        elif slots.active:
            slots.add(message, template)

    def values_of(self, template_id: int) -> ValueCounts:
        """The value counts of a template in this window (created empty)."""
        counts = self.values.get(template_id)
        if counts is None:
            counts = self.values[template_id] = ValueCounts()
        return counts

    def _keep_anomaly(
        self, template_id: int, label: LogLabel, line: str, cap: int, incident: int | None, opens: bool
    ) -> None:
        if cap == 0:
            return
        item: dict[str, Any] = {
            "line": line[:_MAX_EXAMPLE],
            "template_id": template_id,
            "severity": label.severity,
            "category": label.category,
            "score": round(label.score, 4),
        }
        if incident is not None:  # "joined" is filled in when the window closes
            item["incident"] = incident
            if opens:
                item["joined"] = 0
        if len(self.anomalies) < cap:
            self.anomalies.append(item)
        else:
            low = min(range(len(self.anomalies)), key=lambda i: self.anomalies[i]["score"])
            if item["score"] > self.anomalies[low]["score"]:
                self.anomalies[low] = item

    def due(self, now: float, cfg: LogsConfig) -> str | None:
        """Why the window must close now ("lines" or "time"), or None."""
        if self.lines >= cfg.window_lines:
            return "lines"
        if self.lines and now - self.start >= cfg.window_s:
            return "time"
        return None

    def close(
        self, now: float, reason: str, cfg: LogsConfig, info: dict[int, TemplateInfo], templates_known: int
    ) -> SummaryMessage:
        """Build the summary, fold this window's rates into the baselines, start a new window."""
        duration = max(now - self.start, 1.0)
        surging = self._surging(duration, cfg, info)
        self._update_baseline(duration, cfg.baseline_alpha)
        top = [self._template_item(tid, n, info) for tid, n in self.counts.most_common(cfg.top_templates)]
        new = [
            {
                k: v
                for k, v in self._template_item(tid, self.counts[tid], info).items()
                if k in ("template_id", "template", "count", "example", "severity", "category", "values")
            }
            for tid in sorted(self.new_ids, key=lambda t: -self.counts[t])[:_MAX_NEW]
        ]
        counts = {s: self.severities.get(s, 0) for s in SEVERITIES}
        for item in self.anomalies:  # an incident's opening line: the lines that joined it here
            if "joined" in item:
                item["joined"] = self.incident_lines[item["incident"]] - 1
        story = self._story(info)
        texts = {tid: self._text(tid, info) for tid in self.counts}
        msg = SummaryMessage(
            source=self.source,
            start=self.start,
            end=now,
            lines=self.lines,
            reason=reason,
            severity_counts=counts,
            top_templates=top,
            new_templates=new,
            surging=surging,
            anomalies=sorted(self.anomalies, key=lambda a: -float(a["score"])),
            anomaly_count=self.anomaly_count,
            truncated_lines=self.truncated,
            templates_known=templates_known,
            story=story,
            headline=headline(
                self.source, self.lines, counts, new, surging, self.anomaly_count, story, texts
            ),
        )
        self._reset(now)
        return msg

    def _text(self, tid: int, info: dict[int, TemplateInfo]) -> str:
        """The template as a headline shows it: constant placeholders filled in."""
        ti = info.get(tid)
        template = ti.template if ti else ""
        slots = self.slots.get(tid)
        return template if slots is None else slots.text(template)

    def _template_item(self, tid: int, count: int, info: dict[int, TemplateInfo]) -> dict[str, Any]:
        ti = info.get(tid)
        item = {
            "template_id": tid,
            "template": ti.template if ti else "",
            "count": count,
            "example": self.examples.get(tid, ""),
            "severity": ti.label.severity if ti else "info",
            "category": ti.label.category if ti else "other",
        }
        if tid in self.values:
            item["values"] = self.values[tid].top()
        return item

    def _story(self, info: dict[int, TemplateInfo]) -> dict[str, Any] | None:
        """The template the headline tells about: the one with the most lines at error or worse
        by their own account (stated level, words, parameters), then at warning, or else with
        anomalies;
        None when the window holds neither."""
        loud = set(self.loud_lines) | {a["template_id"] for a in self.anomalies}
        if not loud:
            return None
        tid = max(loud, key=lambda t: (self.severe_lines[t], self.loud_lines[t], self.counts[t]))
        return self._template_item(tid, self.counts.get(tid, 0), info)

    def _surging(
        self, duration: float, cfg: LogsConfig, info: dict[int, TemplateInfo]
    ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for tid, n in self.counts.items():
            base = self.baseline.get(tid)
            if base is None or tid in self.new_ids or n < cfg.surge_min_count:
                continue
            rate = n / duration
            factor = rate / max(base, _MIN_BASELINE)
            if factor >= cfg.surge_factor:
                ti = info.get(tid)
                out.append(
                    {
                        "template_id": tid,
                        "template": ti.template if ti else "",
                        "count": n,
                        "rate": round(rate, 4),
                        "baseline": round(base, 4),
                        "factor": round(factor, 2),
                    }
                )
        out.sort(key=lambda s: -float(s["factor"]))
        return out[:_MAX_SURGING]

    def _update_baseline(self, duration: float, alpha: float) -> None:
        for tid in set(self.baseline) | set(self.counts):
            rate = self.counts.get(tid, 0) / duration
            old = self.baseline.get(tid)
            new = rate if old is None else alpha * rate + (1 - alpha) * old
            if new < _DROP_BASELINE and tid not in self.counts:
                self.baseline.pop(tid, None)
            else:
                self.baseline[tid] = new

    def _reset(self, now: float) -> None:
        self.start = now
        self.lines = self.truncated = self.anomaly_count = 0
        self.severities = Counter()
        self.counts = Counter()
        self.examples = {}
        self.new_ids = set()
        self.anomalies = []
        self.values = {}
        self.loud_lines = Counter()
        self.severe_lines = Counter()
        self.slots = {}
        self.incident_lines = Counter()

    def remap(self, canonical: dict[int, int]) -> None:
        """Templates merged since the lines were counted: count them under their current id."""
        if not canonical:
            return
        counts: Counter[int] = Counter()
        for tid, n in self.counts.items():
            counts[canonical.get(tid, tid)] += n
        self.counts = counts
        self.new_ids = {canonical.get(t, t) for t in self.new_ids}
        for tid, ex in list(self.examples.items()):
            self.examples.setdefault(canonical.get(tid, tid), ex)
        for a in self.anomalies:
            a["template_id"] = canonical.get(a["template_id"], a["template_id"])
        self.loud_lines = _remapped(self.loud_lines, canonical)
        self.severe_lines = _remapped(self.severe_lines, canonical)
        self.slots = {canonical.get(t, t): s for t, s in self.slots.items()}  # text() checks the template
        for tid in [t for t in self.values if t in canonical]:
            self.values_of(canonical[tid]).merge(self.values.pop(tid))
        baseline: dict[int, float] = {}
        for tid, rate in self.baseline.items():
            key = canonical.get(tid, tid)
            baseline[key] = baseline.get(key, 0.0) + rate
        self.baseline = baseline


def _remapped(counts: Counter[int], canonical: dict[int, int]) -> Counter[int]:
    out: Counter[int] = Counter()
    for tid, n in counts.items():
        out[canonical.get(tid, tid)] += n
    return out


def _story_text(item: dict[str, Any], text: str, limit: int) -> str:
    """``310× token refused for <*> from <*> port <*> from 6 IPs, top 203.0.113.7 (120)``"""
    where = ""
    values = item.get("values") or {}
    for kind, plural in _STORY_KINDS:
        if kind in values:
            distinct = values[kind]["distinct"]
            top_value, top_count = values[kind]["top"][0]
            if distinct == 1 and str(top_value) in text.split():
                break  # the text already shows the one value
            prefix = f"{distinct} {plural}, top " if distinct > 1 else ""
            where = f" from {prefix}{shorten(str(top_value), 40) or '?'} ({top_count})"
            break
    count = f"{item['count']}× "
    return count + (shorten(text, limit - len(count) - len(where)) or PARAM) + where


def headline(
    source: str,
    lines: int,
    counts: dict[str, int],
    new: list[dict[str, Any]],
    surging: list[dict[str, Any]],
    anomalies: int,
    story: dict[str, Any] | None = None,
    texts: dict[int, str] | None = None,
) -> str:
    """One line a person can read on a phone (``HEADLINE_CHARS`` at most unless the source name
    alone is longer): the summary's severity counts at warning or worse, then the story (the
    loudest template, how often, from how many IPs/hosts/users and the top one), the anomalies,
    the strongest surge and the new templates, each only when it fits whole. ``texts`` gives the
    templates as shown (constant placeholders filled in)."""
    shown = texts or {}

    def text(item: dict[str, Any]) -> str:
        return shown.get(int(item["template_id"]), str(item["template"]))

    parts = [f"{source}: {lines} lines"]
    for sev, word in (("critical", "critical"), ("error", "errors"), ("warning", "warnings")):
        if counts.get(sev):
            parts.append(f"{counts[sev]} {word if counts[sev] != 1 or sev == 'critical' else sev}")
    out = ", ".join(parts)
    extra = []
    if story is not None:
        extra.append(_story_text(story, text(story), min(_STORY_CHARS, HEADLINE_CHARS - len(out) - 2)))
    if anomalies:
        extra.append(f"{anomalies} anomal{'y' if anomalies == 1 else 'ies'}")
    if surging:
        s = surging[0]
        extra.append(f"surge x{s['factor']:.0f}: {shorten(text(s), _PART_CHARS)}")
    if new:
        extra.append(f"{len(new)} new: {shorten(text(new[0]), _PART_CHARS)}")
    if not extra:
        return f"{out}; all as usual"
    for part in extra:
        if part.endswith(": ") or len(out) + 2 + len(part) > HEADLINE_CHARS:
            continue  # a part that does not fit whole is left out, never cut
        out = f"{out}; {part}"
    return out
