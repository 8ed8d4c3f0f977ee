"""Anomaly from evidence: a line's label (the model's score, parameter rules, the level the line
states) weighed against what this source has logged before.

Per source and template the history keeps how many lines were seen, when the template first and
last appeared (in the source's own line count), and a decayed count of its recent lines. From it:

- **familiarity**: the score is divided by ``1 + seen / FAMILIAR``; a template seen hundreds of
  times is routine whatever its words say, an error that repeats is flagged on its first lines
  (a critical one, stated or in words, ``CRITICAL_PATIENCE`` times longer). One kind of line is
  never routine: one that states a critical level (``FATAL``, ``crit``, ``<2>``) in words that
  name a failure (``error``, ``failed``, ``panic``...). Each repeat is flagged (alerts about it
  are still sent once per cooldown); a critical line whose words name nothing, such as the
  register dump after a crash, is damped like the others (and ``incidents.py`` makes it part of
  the crash's incident when it follows closely);
- **new**: a template the source never logged, once the source is warm, adds ``NEW_BONUS`` when
  it is at warning or worse; during a source's first ``WARMUP_LINES`` lines every template is new,
  so newness counts for nothing;
- **rate jump**: a known template at warning or worse whose share of the source's recent lines
  is ``JUMP_FACTOR`` times its long-run share (and at least ``JUMP_MIN`` recent lines) is flagged
  once, when the jump starts;
- **stated level**: a line that states error or critical starts from at least ``STATED_FLOOR``
  (the classifier already halves the score of lines that state debug/info/notice);
- **corroboration**: the model's score counts in full only when something besides the model says
  trouble: a stated level, words of trouble in the template (``error``, ``failed``, ``denied``...,
  see ``parse.infer_severity``) or a parameter rule (exit code, HTTP 5xx, temperature), at error
  or worse, or at warning (a stated warning only once the source is warm: start-ups warn about
  settings). Otherwise it
  is weighed by ``ALONE_WEIGHT``, which keeps it under the threshold: a model trained on generated
  lines ranks lines but does not flag them on its own.

The history is plain data: ``to_dict``/``from_dict`` give versioned JSON for the store."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from edge_agent.records.logs import LogLabel

__all__ = ["Evidence", "SourceHistory", "TemplateHistory"]

FAMILIAR = 1.0
CRITICAL_PATIENCE = 8.0
NEW_BONUS = 0.25
WARMUP_LINES = 200
RECENT_LINES = 100
_DECAY = 1.0 - 1.0 / RECENT_LINES
JUMP_FACTOR = 4.0
JUMP_MIN = 10.0
JUMP_HISTORY = 20
JUMP_SCORE = 0.6
ALONE_WEIGHT = 0.45
STATED_FLOOR = {"error": 0.55, "critical": 0.75}
_SEVERE = frozenset({"error", "critical"})


@dataclass(slots=True)
class TemplateHistory:
    """One template on one source: lines seen, first and last source line, recent lines."""

    count: int = 0
    first: int = 0
    last: int = 0
    recent: float = 0.0
    jumping: bool = False

    def recent_at(self, line: int) -> float:
        """The decayed count of recent lines as of source line ``line``."""
        return self.recent * _DECAY ** max(line - self.last, 0)


@dataclass(slots=True)
class SourceHistory:
    """All templates one source has logged, and its line count."""

    lines: int = 0
    templates: dict[int, TemplateHistory] = field(default_factory=dict)


class Evidence:
    """Per-source template history and the anomaly decision made from it (see module doc).
    ``canonical`` maps a template id to the id it is known by now (templates merge);
    ``absorbed_others`` says whether other ids merged into a template (only then is the history
    of those ids folded in)."""

    def __init__(
        self,
        canonical: Callable[[int], int],
        threshold: float = 0.5,
        max_templates: int = 5000,
        absorbed_others: Callable[[int], bool] = lambda _tid: True,
    ) -> None:
        self._canonical = canonical
        self._absorbed_others = absorbed_others
        self._threshold = threshold
        self._max_templates = max_templates
        self.sources: dict[str, SourceHistory] = {}

    def judge(
        self,
        source: str,
        template_id: int,
        label: LogLabel,
        stated: str | None,
        trouble: str | None,
        words: str | None = None,
    ) -> LogLabel:
        """Record one line of ``source`` and return its label with the evidence-based score.
        ``stated`` is the level the line states; ``trouble`` the severity that something besides
        the model gives it (words, parameter rules; None: nothing says trouble); ``words`` the
        severity the template's own words say (None: info or lower)."""
        src = self.sources.setdefault(source, SourceHistory())
        src.lines += 1
        tid = self._canonical(template_id)
        hist = src.templates.get(tid)
        if hist is None and self._absorbed_others(tid):
            hist = self._fold_aliases(src, tid)
        seen = 0 if hist is None else hist.count
        jump = False
        if hist is None:
            hist = src.templates[tid] = TemplateHistory(first=src.lines, last=src.lines)
            self._bound(src)
        else:
            jump = self._jump(src.lines, hist)
        hist.recent = hist.recent_at(src.lines) + 1.0
        hist.count += 1
        hist.last = src.lines
        score = self.score(label, stated, seen, src.lines > WARMUP_LINES, jump, trouble, words)
        return LogLabel(label.severity, label.category, score >= self._threshold, round(score, 4))

    @staticmethod
    def score(
        label: LogLabel,
        stated: str | None,
        seen: int,
        warm: bool,
        jump: bool,
        trouble: str | None,
        words: str | None = None,
    ) -> float:
        """The anomaly score of a line from its label and its template's history."""
        said = {stated, trouble}
        # a stated warning counts once the source is warm (start-ups warn about settings); a
        # warning in the words of a line that states no level is an event and counts at once
        loud = bool(said & _SEVERE) or ("warning" in said and (warm or stated is None))
        score = max(label.score, STATED_FLOOR.get(stated or "", 0.0))
        if not loud:
            return score * ALONE_WEIGHT / (1.0 + seen / FAMILIAR)
        if seen == 0:
            return min(score + NEW_BONUS, 1.0) if warm else score
        if stated == "critical" and words in _SEVERE:
            return score  # a stated critical failure is not routine however often it repeats
        score /= 1.0 + seen / (FAMILIAR * (CRITICAL_PATIENCE if "critical" in said else 1.0))
        if jump and loud:
            score = max(score, JUMP_SCORE)
        return score

    @staticmethod
    def _jump(line: int, hist: TemplateHistory) -> bool:
        """True on the line where the template's recent share first exceeds JUMP_FACTOR times
        its long-run share (the jump then lasts until its recent lines fall back)."""
        recent = hist.recent_at(line) + 1.0
        span = max(line - hist.first, 1)
        long_share = hist.count / span
        high = (
            hist.count >= JUMP_HISTORY
            and recent >= JUMP_MIN
            and recent / RECENT_LINES >= JUMP_FACTOR * long_share
        )
        started = high and not hist.jumping
        if high:
            hist.jumping = True
        elif recent / RECENT_LINES < 2.0 * long_share:
            hist.jumping = False
        return started

    def _fold_aliases(self, src: SourceHistory, tid: int) -> TemplateHistory | None:
        """Histories kept under ids that have since merged into ``tid``, folded into one."""
        merged: TemplateHistory | None = None
        for old in [t for t in src.templates if t != tid and self._canonical(t) == tid]:
            h = src.templates.pop(old)
            if merged is None:
                merged = h
            else:
                merged.count += h.count
                merged.first = min(merged.first, h.first)
                merged.recent = merged.recent_at(max(merged.last, h.last)) + h.recent_at(
                    max(merged.last, h.last)
                )
                merged.last = max(merged.last, h.last)
        if merged is not None:
            src.templates[tid] = merged
        return merged

    def _bound(self, src: SourceHistory) -> None:
        """Keep at most ``max_templates`` per source: the longest unseen go first."""
        if len(src.templates) > self._max_templates:
            for tid in sorted(src.templates, key=lambda t: src.templates[t].last)[: len(src.templates) // 10]:
                del src.templates[tid]

    def forget(self, source: str) -> None:
        self.sources.pop(source, None)

    # -- persistence -----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            name: {
                "lines": src.lines,
                "templates": {
                    str(tid): [h.count, h.first, h.last, round(h.recent, 3), h.jumping]
                    for tid, h in src.templates.items()
                },
            }
            for name, src in self.sources.items()
        }

    def load_dict(self, doc: dict[str, Any]) -> None:
        """Restore ``to_dict`` output; raises ValueError/TypeError/KeyError when malformed."""
        sources: dict[str, SourceHistory] = {}
        for name, item in doc.items():
            src = SourceHistory(lines=int(item["lines"]))
            for tid, (count, first, last, recent, jumping) in dict(item["templates"]).items():
                src.templates[int(tid)] = TemplateHistory(
                    int(count), int(first), int(last), float(recent), bool(jumping)
                )
            sources[str(name)] = src
        self.sources = sources
