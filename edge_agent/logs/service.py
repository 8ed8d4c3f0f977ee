"""The log service the pipeline calls: lines in, summaries and alerts out.

``ingest(source, lines, now)`` parses, templates and labels each line and returns, from the same
call, one alert per incident opened (``incidents.py``: a failing line opens one; the dump, stack
trace or burst of the same fault that follows joins it instead of alerting again) and the
summaries of windows that closed; ``tick(now)`` closes incidents and windows whose time is up.
One template miner and one label cache serve all sources; windows and rate baselines are per
source. Template state is saved through a ``Store`` (``logs.state_dir`` or an explicit store) and
restored on start with the same ids.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import structlog

from edge_agent.errors import PayloadError
from edge_agent.logs.classifier import LineClassifier, LogModel
from edge_agent.logs.config import LogsConfig
from edge_agent.logs.evidence import ALONE_WEIGHT, JUMP_SCORE, Evidence
from edge_agent.logs.incidents import Incident, Incidents, input_fault, is_dump, line_clock, party_of
from edge_agent.logs.labels import LOUD, SEVERITIES
from edge_agent.logs.masking import PARAM
from edge_agent.logs.parse import ParsedLine, display_message, infer_severity, parse_line
from edge_agent.logs.summary import SourceWindow, TemplateInfo
from edge_agent.logs.templates import TemplateMatch, TemplateMiner, template_params
from edge_agent.logs.values import extract
from edge_agent.messages.alert import AlertMessage
from edge_agent.messages.summary import SummaryMessage
from edge_agent.records.logs import LogLabel, Outgoing, RawLine
from edge_agent.store import FileStore, Store

__all__ = ["LineResult", "LogService", "Outgoing", "RawLine"]

_log = structlog.get_logger(__name__)
_MAX_ALERT_KEYS = 10_000
_MAX_WORD_CACHE = 20_000
_SEVERE = frozenset({"error", "critical"})
_WARNING = SEVERITIES.index("warning")


def _within_words(label: LogLabel, words: str | None) -> LogLabel:
    """The model's label of a line that states no level and whose parameters trip no rule, kept
    within what the line's words allow. Words that say warning at most: the model alone may make
    it a warning, not an error (the model, trained on generated lines, reads unfamiliar routine
    lines such as boot inventory as severe). Words that say error or worse: at least a warning,
    whatever the model says (it reads an unfamiliar system's failure reports as routine as
    readily; the model still chooses between warning, error and critical)."""
    if words in _SEVERE:
        if SEVERITIES.index(label.severity) >= _WARNING:
            return label
    elif label.severity not in _SEVERE:
        return label
    return LogLabel("warning", label.category, label.anomaly, label.score)


def _line_time(parsed: ParsedLine, now: float | None) -> float | None:
    """When a line happened, for incident gaps: its timestamp, else the time written at its
    start, else its arrival."""
    if parsed.ts is not None:
        return parsed.ts
    clock = line_clock(parsed.text)
    return clock if clock is not None else now


class LineResult:
    """One classified line (what ``edge-agent logs classify`` prints)."""

    __slots__ = ("incident", "label", "match", "opens", "parsed", "said")

    def __init__(
        self, parsed: ParsedLine, match: TemplateMatch, label: LogLabel, said: str | None = None
    ) -> None:
        self.parsed = parsed
        self.match = match
        self.label = label
        # the severity the line itself gives (stated level, words of trouble, parameter rules);
        # None when only the model has an opinion
        self.said = said
        self.incident: Incident | None = None  # the source's incident this line opened or joined
        self.opens = False  # it opened that incident (its alert reports it)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "line": self.parsed.text,
            "severity": self.label.severity,
            "category": self.label.category,
            "anomaly": self.label.anomaly,
            "score": round(self.label.score, 4),
            "template": self.match.template,
            "template_id": self.match.template_id,
        }
        if self.parsed.truncated:
            out["truncated"] = True
        if self.incident is not None:
            out["incident"] = self.incident.number
            if self.opens:
                out["alert"] = True
        return out


class LogService:
    """See module doc. Not thread-safe: the pipeline calls it from one worker."""

    def __init__(
        self,
        model: LogModel | None = None,
        config: LogsConfig | None = None,
        store: Store | None = None,
    ) -> None:
        self.config = config if config is not None else LogsConfig()
        if store is None and self.config.state_dir is not None:
            store = FileStore(Path(self.config.state_dir))
        self._store = store
        miner, history = self._restore()
        miner = miner or TemplateMiner(max_templates=self.config.max_templates)
        self.classifier = LineClassifier(model, anomaly_threshold=self.config.anomaly_threshold, miner=miner)
        self.evidence = Evidence(
            miner.canonical,
            threshold=self.config.anomaly_threshold,
            max_templates=self.config.max_templates,
            absorbed_others=miner.absorbed_others,
        )
        if history is not None:
            self._load_history(history)
        self._windows: dict[str, SourceWindow] = {}
        self._info: dict[int, TemplateInfo] = {}
        self._last_alert: dict[tuple[str, int], float] = {}
        self._suppressed: dict[tuple[str, int], int] = {}
        self._last_save = time.monotonic()
        self._dirty = False
        self._words: dict[tuple[int, str], str | None] = {}
        self._input_words: dict[tuple[int, str], bool] = {}
        self._line_chars = self.config.max_line_chars
        self._const_values: dict[tuple[int, str], list[tuple[str, str]]] = {}
        cfg = self.config
        self.incidents = Incidents(
            cfg.incident_gap_s, cfg.incident_gap_lines, cfg.incident_max_s, cfg.input_fault_parties
        )

    @property
    def miner(self) -> TemplateMiner:
        return self.classifier.miner

    def swap_model(self, model: LogModel | None) -> None:
        """Classify with ``model`` from the next call on (a bundle installed at run time).
        Templates, open windows and alert state are kept; template labels are recomputed."""
        self.classifier.swap_model(model)
        self._info.clear()

    def limit_lines(self, max_chars: int | None) -> None:
        """Cut lines to ``max_chars`` from the next call on (the SLA ladder's short_input step);
        None: back to ``logs.max_line_chars``."""
        limit = self.config.max_line_chars
        self._line_chars = limit if max_chars is None else min(max_chars, limit)

    # -- the pipeline's two calls ----------------------------------------------------------------

    def ingest(self, source: str, lines: Sequence[RawLine], now: float) -> list[Outgoing]:
        """Process ``lines`` of ``source`` received at ``now`` (epoch seconds)."""
        out: list[Outgoing] = []
        opened: list[tuple[LineResult, dict[str, Any]]] = []
        for result in self.process(lines, source, now):
            window = self._window(source, now, out)
            window.add(
                result.match.template_id,
                result.match.new,
                result.label,
                result.parsed.text,
                result.parsed.truncated,
                self.config.max_anomalies,
                self._values(result),
                result.said,
                result.parsed.message,
                result.match.template,
                result.incident.number if result.incident is not None else None,
                result.opens,
            )
            if result.opens:
                opened.append((result, window.values_of(result.match.template_id).top()))
            if window.due(now, self.config) == "lines":
                out.append(self._close(window, now, "lines"))
        for result, values in opened:  # after the batch: the lines that came with it have joined
            self._alert(source, result, values, now, out)
        out.extend(self.tick(now, save=False))
        return out

    def tick(self, now: float, *, save: bool = True) -> list[Outgoing]:
        """Close the incidents and windows whose time is up; save template state when due."""
        out: list[Outgoing] = []
        self.incidents.due(now)
        due = [w for w in list(self._windows.values()) if w.due(now, self.config) == "time"]
        out.extend(self._close(w, now, "time") for w in due)
        if len(self._last_alert) > _MAX_ALERT_KEYS:
            cutoff = now - self.config.alert_cooldown_s
            for key in [k for k, t in self._last_alert.items() if t < cutoff]:
                del self._last_alert[key]
                self._suppressed.pop(key, None)
        if save and self._dirty and time.monotonic() - self._last_save >= self.config.save_every_s:
            self.save()
        return out

    def flush(self, now: float) -> list[Outgoing]:
        """Close every open incident and every open window that holds lines (shutdown, end of a
        file)."""
        out: list[Outgoing] = []
        self.incidents.close_all()
        out.extend(self._close(w, now, "flush") for w in list(self._windows.values()) if w.lines)
        self.save()
        return out

    # -- lines ----------------------------------------------------------------------------------

    def process(
        self, lines: Sequence[RawLine | str], source: str = "-", now: float | None = None
    ) -> list[LineResult]:
        """Parse, template and label lines of ``source`` arrived at ``now`` (no windows): the
        classify path. The anomaly flag weighs each label against the source's template history
        (``evidence.py``); failing lines open incidents that the lines after them join
        (``incidents.py``)."""
        parsed = [parse_line(line, self._line_chars) for line in lines]
        matches = [self.miner.add_message(p.message) for p in parsed]
        self._dirty = self._dirty or bool(parsed)
        bases = self.classifier.template_labels(
            [(m.template_id, m.template, p.text) for m, p in zip(matches, parsed, strict=True)]
        )
        results = []
        for p, m, base in zip(parsed, matches, bases, strict=True):
            line_label, param = self.classifier.line_label(base, p)
            # a parameter rule's severity, else the level the line states, else its words
            words = self._trouble(m)
            trouble = param if param is not None else p.level if p.level is not None else words
            if param is None and p.level is None:
                line_label = _within_words(line_label, words)
            label = self.evidence.judge(source, m.template_id, line_label, p.level, trouble, words)
            if (label.anomaly or words is not None) and self._input_fault_words(m):
                label = self._input_fault(source, p, m, label)
            info = self._info.get(m.template_id)
            if info is None or info.template != m.template or info.label is not base:
                self._info[m.template_id] = TemplateInfo(m.template, base)
            result = LineResult(p, m, label, trouble if trouble is not None else p.level)
            self._place(source, result, words is None and param is None, now)
            results.append(result)
        return results

    def _input_fault(self, source: str, p: ParsedLine, m: TemplateMatch, label: LogLabel) -> LogLabel:
        """A request failing on its own input: the requesting party's warning, not an anomaly,
        until ``input_fault_parties`` parties have met it (``incidents.py``)."""
        party = party_of(extract(p.message), template_params(p.message, m.template))
        reached, many = self.incidents.many_parties(source, self.miner.canonical(m.template_id), party)
        if reached:  # the party count has just reached the limit: the system's fault, flagged once
            return LogLabel(label.severity, label.category, True, max(label.score, JUMP_SCORE))
        if many:
            return label
        severity = "warning" if label.severity in ("error", "critical") else label.severity
        score = round(min(label.score, self.config.anomaly_threshold * ALONE_WEIGHT), 4)
        return LogLabel(severity, label.category, False, score)

    def _place(self, source: str, result: LineResult, wordless: bool, now: float | None) -> None:
        """Open, join or close the source's incident with this line (``incidents.py``).
        ``wordless``: neither the line's words nor its parameters name trouble."""
        label = result.label
        incident = self.incidents.open_incident(source)
        alertable = label.anomaly and (
            label.severity == "critical" or label.score >= self.config.alert_threshold
        )
        if incident is None and not alertable:
            return
        line = self.evidence.sources[source].lines
        when = _line_time(result.parsed, now)
        if incident is not None and not self.incidents.within(incident, line, when):
            self.incidents.close(source)
            incident = None
        same = incident is not None and self.miner.canonical(incident.template_id) == self.miner.canonical(
            result.match.template_id
        )
        if incident is not None and (label.anomaly or same or is_dump(result.parsed.message)):
            self.incidents.join(incident, line, when, now)
            result.incident = incident
            if label.anomaly and wordless and not same:  # a dump line stating the crash's level
                score = round(min(label.score, self.config.anomaly_threshold * ALONE_WEIGHT), 4)
                result.label = LogLabel(label.severity, label.category, False, score)
            return
        if alertable:
            result.incident = self.incidents.open(source, result.match.template_id, line, when, now)
            result.opens = True

    def _values(self, result: LineResult) -> list[tuple[str, str]]:
        """IPs, users, devices... of a line; a template without parameters has the same ones on
        every line, read once (cached with the words)."""
        if PARAM in result.match.template:
            return extract(result.parsed.message)
        key = (result.match.template_id, result.match.template)
        pairs = self._const_values.get(key)
        if pairs is None:
            if len(self._const_values) >= _MAX_WORD_CACHE:
                self._const_values.clear()
            pairs = self._const_values[key] = extract(result.parsed.message)
        return pairs

    def _input_fault_words(self, match: TemplateMatch) -> bool:
        """Whether the template reads as a request failing on its own input (cached)."""
        key = (match.template_id, match.template)
        said = self._input_words.get(key)
        if said is None:
            if len(self._input_words) >= _MAX_WORD_CACHE:
                self._input_words.clear()
            said = self._input_words[key] = input_fault(match.template)
        return said

    def _trouble(self, match: TemplateMatch) -> str | None:
        """The severity the template's own words say (None: info or lower; cached)."""
        key = (match.template_id, match.template)
        if key not in self._words:
            if len(self._words) >= _MAX_WORD_CACHE:
                self._words.clear()
            severity = infer_severity(match.template)
            self._words[key] = severity if severity in LOUD else None
        return self._words[key]

    def _window(self, source: str, now: float, out: list[Outgoing]) -> SourceWindow:
        """The source's open window; at ``max_sources``, the longest idle source is dropped
        after its open window is summarized (into ``out``), so no counted line is lost."""
        window = self._windows.get(source)
        if window is None:
            if len(self._windows) >= self.config.max_sources:
                idle = min(self._windows.values(), key=lambda w: w.last_seen)
                if idle.lines:
                    out.append(self._close(idle, now, "flush"))
                del self._windows[idle.source]
            window = self._windows[source] = SourceWindow(source=source, start=now)
        window.last_seen = now
        return window

    def _close(self, window: SourceWindow, now: float, reason: str) -> Outgoing:
        mapping = {
            t: c for t in list(window.counts) + list(window.baseline) if (c := self.miner.canonical(t)) != t
        }
        window.remap(mapping)
        for tid in window.counts:
            if tid not in self._info:
                template = self.miner.template(tid) or ""
                self._info[tid] = TemplateInfo(
                    template, self.classifier.template_labels([(tid, template, template)])[0]
                )
            else:
                current = self.miner.template(tid)
                if current is not None and current != self._info[tid].template:
                    self._info[tid] = TemplateInfo(current, self._info[tid].label)
        msg: SummaryMessage = window.close(now, reason, self.config, self._info, len(self.miner))
        return Outgoing(topic_suffix=SummaryMessage.topic_suffix(window.source), payload=msg.to_dict())

    def _alert(
        self, source: str, result: LineResult, values: dict[str, Any], now: float, out: list[Outgoing]
    ) -> None:
        """The alert of the incident ``result`` opened, with the lines that joined it so far,
        unless its template alerted within the cooldown (then those lines are counted in the next
        alert's ``suppressed``)."""
        incident = result.incident
        if incident is None:
            return
        key = (source, self.miner.canonical(incident.template_id))
        last = self._last_alert.get(key)
        if last is not None and now - last < self.config.alert_cooldown_s:
            self._suppressed[key] = self._suppressed.get(key, 0) + 1 + incident.joined
            return
        self._last_alert[key] = now
        msg = AlertMessage(
            source=source,
            at=now,
            line=result.parsed.text,
            template_id=key[1],
            template=result.match.template,
            severity=result.label.severity,
            category=result.label.category,
            score=result.label.score,
            line_ts=result.parsed.ts,
            suppressed=self._suppressed.pop(key, 0),
            values=values,
            joined=incident.joined,
            message=display_message(result.parsed.message),
            app=result.parsed.app,
        )
        out.append(Outgoing(topic_suffix=AlertMessage.topic_suffix(source), payload=msg.to_dict()))

    # -- state ----------------------------------------------------------------------------------

    def save(self) -> None:
        """Write the template state now (atomic, through the store)."""
        if self._store is None:
            return
        self._store.save(self.config.state_key, self.miner.to_json({"sources": self.evidence.to_dict()}))
        self._last_save = time.monotonic()
        self._dirty = False

    def _restore(self) -> tuple[TemplateMiner | None, Any]:
        """The saved miner and the per-source history saved with it (None, None when none)."""
        if self._store is None:
            return None, None
        data = self._store.load(self.config.state_key)
        if data is None:
            return None, None
        try:
            miner = TemplateMiner.from_json(data, max_templates=self.config.max_templates)
        except PayloadError as exc:
            _log.warning("logs.state_unreadable", key=self.config.state_key, reason=str(exc))
            return None, None
        _log.info("logs.state_restored", templates=len(miner))
        return miner, json.loads(data).get("sources")

    def _load_history(self, history: Any) -> None:
        try:
            self.evidence.load_dict(history)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            _log.warning("logs.history_unreadable", key=self.config.state_key, reason=str(exc))
