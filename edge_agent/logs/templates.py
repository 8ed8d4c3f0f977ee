"""Template mining: drain3's prefix tree over header-stripped, masked messages.

State is saved as versioned plain JSON (template tokens, ids, counts) and rebuilt into a
fresh drain3 tree on load; drain3's own jsonpickle state is never read."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from drain3.drain import Drain, LogCluster

from edge_agent.errors import PayloadError
from edge_agent.logs.masking import PARAM, mask
from edge_agent.logs.parse import parse_line

__all__ = ["STATE_FORMAT", "STATE_VERSION", "TemplateMatch", "TemplateMiner", "template_params"]

STATE_FORMAT = "edge-agent/log-templates"
STATE_VERSION = 1

# tuned once for all sources (bench/logs_grouping.py); never per source
DEPTH = 5
SIM_TH = 1.0
MAX_CHILDREN = 100
# templates equal but for one word merge into one with a parameter there once this many exist
MERGE_AT = 4
_HOLE = "\x00"
_SEEN_MAX = 50_000
# a merge may not leave a template with fewer constant tokens than this share of its length
MIN_CONSTANT_SHARE = 0.5


def _specific_enough(tokens: tuple[str, ...] | list[str]) -> bool:
    constant = sum(1 for t in tokens if t != PARAM)
    return constant >= 1 and constant >= MIN_CONSTANT_SHARE * len(tokens)


def template_params(message: str, template: str) -> tuple[str, ...]:
    """The words of ``message`` where ``template`` has a parameter, in order; empty when the two
    do not line up word for word (a masked shape such as ``<1 sec`` spans two words)."""
    words, slots = message.split(), template.split()
    if len(words) != len(slots):
        return ()
    return tuple(w for w, s in zip(words, slots, strict=True) if s == PARAM)


@dataclass(frozen=True, slots=True)
class TemplateMatch:
    """The template a message was assigned to; ``new`` when this message created it."""

    template_id: int
    template: str
    new: bool


class _Drain(Drain):  # type: ignore[misc]
    """drain3's tree with a similarity over the template's constant tokens only: masked
    parameters neither help nor hurt a match."""

    def get_seq_distance(
        self, seq1: Sequence[str], seq2: Sequence[str], include_params: bool
    ) -> tuple[float, int]:
        constant = 0
        equal = 0
        params = 0
        for t1, t2 in zip(seq1, seq2, strict=True):
            if t1 == PARAM:
                params += 1
                continue
            constant += 1
            if t1 == t2:
                equal += 1
        if constant == 0:  # an all-parameter template only takes all-parameter lines
            return (1.0 if all(t == PARAM for t in seq2) else 0.0), params
        return equal / constant, params


class TemplateMiner:
    """Streaming template miner: ``add`` and ``add_message`` learn and return the template."""

    def __init__(self, max_templates: int | None = None) -> None:
        self._max = max_templates
        self._drain = self._new_drain()
        self._alias: dict[int, int] = {}
        self._absorbers: set[int] = set()  # ids that took other templates in
        self._skeletons: dict[tuple[str, ...], set[int]] = {}
        # (length, position, token) -> ids of templates with that constant token there
        self._postings: dict[tuple[int, int, str], set[int]] = {}
        # masked message -> template id: templates only generalize (sim_th 1.0) and merged ids
        # resolve through canonical(), so a message once matched keeps matching its template
        self._seen: dict[str, int] = {}

    def _new_drain(self) -> _Drain:
        return _Drain(
            depth=DEPTH, sim_th=SIM_TH, max_children=MAX_CHILDREN, max_clusters=self._max, param_str=PARAM
        )

    @staticmethod
    def message_tokens(line: str) -> list[str]:
        """Masked tokens of a raw line's message (header removed)."""
        return mask(parse_line(line).message) or mask(line)

    def add(self, line: str) -> TemplateMatch:
        """Learn from a raw line (parsed here)."""
        return self.add_tokens(self.message_tokens(line))

    def add_message(self, message: str) -> TemplateMatch:
        """Learn from a message already stripped of its header."""
        return self.add_tokens(mask(message))

    def add_tokens(self, tokens: list[str]) -> TemplateMatch:
        key = " ".join(tokens)
        known = self._seen.get(key)
        if known is not None:  # the same masked message again: no tree search
            cid = self.canonical(known)
            if cid in self._drain.id_to_cluster:
                cluster = self._drain.id_to_cluster[cid]  # (indexing marks it used in the LRU)
                cluster.size += 1
                return TemplateMatch(cluster.cluster_id, " ".join(cluster.log_template_tokens), False)
        cluster, change = self._drain.add_log_message(key)
        if change == "cluster_created":
            cluster = self._index_new(cluster)
        if len(self._seen) >= _SEEN_MAX:
            self._seen.clear()
        self._seen[key] = cluster.cluster_id
        return TemplateMatch(
            cluster.cluster_id, " ".join(cluster.log_template_tokens), change == "cluster_created"
        )

    def canonical(self, template_id: int) -> int:
        """The id a template is known by now (templates merge as their variable words show)."""
        seen = template_id
        while seen in self._alias:
            seen = self._alias[seen]
        if seen != template_id:
            self._alias[template_id] = seen
        return seen

    @staticmethod
    def _holes(tokens: tuple[str, ...]) -> list[tuple[int, tuple[str, ...]]]:
        return [(p, (*tokens[:p], _HOLE, *tokens[p + 1 :])) for p, t in enumerate(tokens) if t != PARAM]

    def _index_new(self, cluster: LogCluster) -> LogCluster:
        """Fold older templates the new one generalizes into it; remember its one-word-holed
        skeletons and merge siblings when enough share one."""
        tokens = cluster.log_template_tokens
        covered = self._covered_by(tokens) if PARAM in tokens and _specific_enough(tokens) else []
        if covered:
            cluster = self._fold(cluster, covered)
        else:
            self._post(cluster, add=True)
        holes = self._holes(cluster.log_template_tokens)
        if not _specific_enough(cluster.log_template_tokens[1:]):
            holes = []  # one more parameter would leave too little
        for pos, key in holes:
            members = self._skeletons.setdefault(key, set())
            members.add(cluster.cluster_id)
            live = {m for m in members if m in self._drain.id_to_cluster}
            if len(live) >= MERGE_AT:
                return self._merge(sorted(live), pos)
        return cluster

    def _covered_by(self, tokens: tuple[str, ...]) -> list[int]:
        """Ids of templates equal to ``tokens`` wherever ``tokens`` is not a parameter."""
        n = len(tokens)
        lists = [self._postings.get((n, p, t)) for p, t in enumerate(tokens) if t != PARAM]
        if not lists or any(ids is None for ids in lists):
            return []
        found: set[int] | None = None
        for ids in sorted((ids for ids in lists if ids is not None), key=len):
            found = set(ids) if found is None else found & ids
            if not found:
                return []
        return [cid for cid in found or () if cid in self._drain.id_to_cluster]

    def _post(self, cluster: LogCluster, *, add: bool) -> None:
        tokens = cluster.log_template_tokens
        n = len(tokens)
        for p, t in enumerate(tokens):
            if t == PARAM:
                continue
            if add:
                self._postings.setdefault((n, p, t), set()).add(cluster.cluster_id)
            else:
                ids = self._postings.get((n, p, t))
                if ids is not None:
                    ids.discard(cluster.cluster_id)
                    if not ids:
                        del self._postings[(n, p, t)]

    def _fold(self, general: LogCluster, covered: list[int]) -> LogCluster:
        """Merge ``covered`` templates into the oldest of them, taking ``general``'s tokens."""
        ids = sorted([*covered, general.cluster_id])
        keep = self._drain.id_to_cluster[ids[0]]
        self._unindex(keep)
        keep.log_template_tokens = general.log_template_tokens
        for other in ids[1:]:
            self._absorb(keep, other)
        self._drain.add_seq_to_prefix_tree(self._drain.root_node, keep)
        self._reindex(keep)
        return keep

    def _unindex(self, cluster: LogCluster) -> None:
        for _, key in self._holes(cluster.log_template_tokens):
            self._skeletons.get(key, set()).discard(cluster.cluster_id)
        self._post(cluster, add=False)

    def _reindex(self, cluster: LogCluster) -> None:
        for _, key in self._holes(cluster.log_template_tokens):
            self._skeletons.setdefault(key, set()).add(cluster.cluster_id)
        self._post(cluster, add=True)

    def absorbed_others(self, template_id: int) -> bool:
        """Whether other template ids now resolve to ``template_id`` (templates merged into it)."""
        return template_id in self._absorbers

    def _absorb(self, keep: LogCluster, other: int) -> None:
        gone = self._drain.id_to_cluster.pop(other, None)
        self._alias[other] = keep.cluster_id
        self._absorbers.add(keep.cluster_id)
        if gone is None:
            return  # already evicted
        self._unindex(gone)

    def _merge(self, ids: list[int], pos: int) -> LogCluster:
        """Templates equal but at ``pos``: one template with a parameter there (oldest id)."""
        keep: LogCluster = self._drain.id_to_cluster[ids[0]]
        self._unindex(keep)
        tokens = list(keep.log_template_tokens)
        tokens[pos] = PARAM
        keep.log_template_tokens = tuple(tokens)
        for other in ids[1:]:
            self._absorb(keep, other)
        self._drain.add_seq_to_prefix_tree(self._drain.root_node, keep)
        self._reindex(keep)
        return keep

    def template(self, template_id: int) -> str | None:
        cluster = self._drain.id_to_cluster.get(template_id)
        return None if cluster is None else " ".join(cluster.log_template_tokens)

    def __len__(self) -> int:
        return len(self._drain.id_to_cluster)

    # -- persistence -------------------------------------------------------------------------

    def to_json(self, extra: dict[str, Any] | None = None) -> bytes:
        """The state as versioned JSON; ``extra`` keys (e.g. per-source history) ride along."""
        clusters = sorted(self._drain.clusters, key=lambda c: c.cluster_id)
        doc: dict[str, Any] = {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "params": {"depth": DEPTH, "sim_th": SIM_TH, "max_children": MAX_CHILDREN},
            "next_id": self._drain.clusters_counter,
            "templates": [
                {"id": c.cluster_id, "tokens": list(c.log_template_tokens), "count": c.size} for c in clusters
            ],
            "aliases": {str(old): self.canonical(old) for old in sorted(self._alias)},
            **(extra or {}),
        }
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes, max_templates: int | None = None) -> TemplateMiner:
        """Rebuild a miner from ``to_json`` output; templates keep their ids."""
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise PayloadError(f"template state is not JSON: {exc}") from exc
        if not isinstance(doc, dict) or doc.get("format") != STATE_FORMAT:
            raise PayloadError("template state has an unknown format")
        if doc.get("version") != STATE_VERSION:
            raise PayloadError(f"template state version {doc.get('version')!r} is not {STATE_VERSION}")
        miner = cls(max_templates)
        drain = miner._drain
        try:
            for item in doc["templates"]:
                cluster = LogCluster([str(t) for t in item["tokens"]], int(item["id"]))
                cluster.size = int(item["count"])
                drain.id_to_cluster[cluster.cluster_id] = cluster
                drain.add_seq_to_prefix_tree(drain.root_node, cluster)
                miner._reindex(cluster)
            drain.clusters_counter = max(int(doc["next_id"]), max(drain.id_to_cluster.keys(), default=0))
            miner._alias = {int(k): int(v) for k, v in dict(doc.get("aliases", {})).items()}
            miner._absorbers = set(miner._alias.values())
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise PayloadError(f"template state is malformed: {exc}") from exc
        return miner
