"""The bundle's model at run time: segments chained per task graph, behind ``run_intents``/``run_logs``.

A graph (``manifest.graphs[task]``) is an ordered list of segments. Values flow between segments
by name: the ``ids`` input feeds the embedding, which writes ``h0``; block ``i`` reads ``h{i}``
and writes ``h{i+1}``; heads read the last hidden state and write the named logits. The chaining
lives in :class:`SegmentChain` (all segments resident) so that a streaming executor can replace
it without touching callers: anything with ``run(feeds) -> dict`` and ``close()`` will do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from edge_agent.errors import BundleError, InferenceError
from edge_agent.runtime.backend import Backend, load_backend
from edge_agent.runtime.bundle import Bundle, SegmentSpec
from edge_agent.runtime.runner import SegmentRunner
from edge_agent.runtime.tokenizer import Tokenizer
from edge_agent.runtime.wordpiece import WordPieceTokenizer

__all__ = ["Executor", "IntentOutputs", "Model", "SegmentChain", "open_tokenizer"]

FloatArray = npt.NDArray[np.float32]
INTENT_OUTPUTS = ("intent_logits", "slot_logits")
SENTENCE_OUTPUT = "sentence_embedding"
LOG_OUTPUTS = ("severity_logits", "category_logits", "anomaly_logit")


@dataclass
class IntentOutputs:
    """One run of the intent graph: logits, and the sentence embedding (unit rows) when the
    bundle's intent head writes one (custom intents compare it with the user's examples)."""

    intent_logits: FloatArray  # (B, I)
    slot_logits: FloatArray  # (B, L, T)
    embedding: FloatArray | None  # (B, E), each row of length 1


class Executor(Protocol):
    """Runs one graph for one example (batch 1): feeds by name in, named outputs out."""

    def run(self, feeds: dict[str, npt.NDArray[Any]]) -> dict[str, npt.NDArray[Any]]: ...
    def close(self) -> None: ...


class SegmentChain:
    """Resident executor: every segment of a graph loaded once, run in order."""

    def __init__(self, runners: Sequence[SegmentRunner]) -> None:
        self.runners = list(runners)

    def run(self, feeds: dict[str, npt.NDArray[Any]]) -> dict[str, npt.NDArray[Any]]:
        env = dict(feeds)
        for runner in self.runners:
            runner.run(env)
        return env

    def close(self) -> None:
        self.runners.clear()


class Model:
    """Tokenizer plus the intent and log graphs of a verified bundle."""

    def __init__(
        self,
        bundle: Bundle,
        backend: str | Backend = "auto",
        threads: int = 1,
        residency: str = "resident",
        weight_budget_mb: float | None = None,
        variant: str = "default",
        delegates: Sequence[object] = (),
        executors: Mapping[str, Executor] | None = None,
        tasks: Sequence[str] = ("intents", "logs"),
        weight_cache_dir: Path | None = None,
    ) -> None:
        """``weight_cache_dir``: streamed segments keep XNNPACK's packed weights there (litert;
        ``weight_cache.py``; ``cachedir.weight_cache_dir`` says where the commands put them)."""
        if residency not in ("resident", "stream", "auto"):
            raise BundleError(f"unknown residency {residency!r}; use resident, stream or auto")
        self.bundle = bundle
        self.backend = backend if isinstance(backend, Backend) else load_backend(backend)
        self.threads = threads
        self.weight_budget_mb = weight_budget_mb
        self.max_len = int(bundle.tokenizer_entry("intents")["max_len"])
        self.tokenizer = open_tokenizer(bundle, self.max_len)
        # the log graph's pieces: the same tokenizer unless the bundle names one of its own
        # (``task_tokenizers.logs``: a teacher's bundle that carries a student's log graph)
        self.log_max_len = int(bundle.tokenizer_entry("logs")["max_len"])
        own = "logs" in bundle.manifest.get("task_tokenizers", {}) and "logs" in tasks
        self.log_tokenizer = open_tokenizer(bundle, self.log_max_len, "logs") if own else self.tokenizer
        specs = bundle.segments(variant)
        self._runners: dict[str, SegmentRunner] = {}
        if executors is None and residency != "resident":
            # only here: streaming's executor, with its loader and reader threads
            from edge_agent.runtime.segments import local_executors

            executors = local_executors(
                bundle,
                self.backend,
                threads=threads,
                residency=residency,
                weight_budget_mb=weight_budget_mb,
                variant=variant,
                delegates=delegates,
                weight_cache_dir=weight_cache_dir,
            )
        # executors (streaming, or edge_agent.runtime.chain.open_runtime(...).executors with the
        # delegate fallback chain and request batching) replace the resident chains
        self._graphs: dict[str, Executor] = (
            {t: e for t, e in executors.items() if t in tasks}
            if executors is not None
            else {task: self._resident_chain(task, specs, variant, delegates) for task in tasks}
        )
        self.labels = {head: bundle.labels(head) for head in ("intents", "slot_tags", "severity", "category")}
        self.has_sentence_embedding = _writes(bundle, specs, variant, SENTENCE_OUTPUT)
        self.warm_up()

    def _resident_chain(
        self, task: str, specs: dict[str, SegmentSpec], variant: str, delegates: Sequence[object]
    ) -> SegmentChain:
        """The bundle's fused file for ``task`` when it has one (one invoke per request, the
        same outputs), else every segment of the graph in order."""
        fused = self.bundle.fused(task, variant)
        if fused is not None:
            return SegmentChain([self._runner({fused.name: fused}, fused.name, delegates)])
        return SegmentChain(
            [self._runner(specs, name, delegates) for name in self.bundle.graph(task, variant)]
        )

    def _runner(self, specs: dict[str, SegmentSpec], name: str, delegates: Sequence[object]) -> SegmentRunner:
        if name not in self._runners:
            if name not in specs:
                raise BundleError(f"{self.bundle.path}: graph uses unknown segment {name!r}")
            spec = specs[name]
            interp = self.backend.make_interpreter(self.bundle.path / spec.file, self.threads, delegates)
            self._runners[name] = SegmentRunner(spec, interp)
        return self._runners[name]

    def warm_up(self) -> None:
        if "intents" in self._graphs:
            self.run_intents(np.zeros((1, self.max_len), dtype=np.int32))
        if "logs" in self._graphs:
            self.run_logs(np.zeros((1, self.log_max_len), dtype=np.int32))

    def run_intents(self, ids: npt.NDArray[np.int32]) -> tuple[FloatArray, FloatArray]:
        """(intent_logits (B, I), slot_logits (B, L, T)) for token ids (B, L)."""
        intent, slots = self._run_batch("intents", ids, INTENT_OUTPUTS)
        return intent, slots

    def run_intent_outputs(self, ids: npt.NDArray[np.int32]) -> IntentOutputs:
        """The intent graph's outputs for token ids (B, L), the sentence embedding included
        when the bundle has one (same single run)."""
        if not self.has_sentence_embedding:
            intent, slots = self.run_intents(ids)
            return IntentOutputs(intent, slots, None)
        intent, slots, emb = self._run_batch("intents", ids, (*INTENT_OUTPUTS, SENTENCE_OUTPUT))
        return IntentOutputs(intent, slots, _unit_rows(emb))

    def run_logs(self, ids: npt.NDArray[np.int32]) -> tuple[FloatArray, FloatArray, FloatArray]:
        """(severity_logits (B, S), category_logits (B, C), anomaly_logit (B,))."""
        sev, cat, anom = self._run_batch("logs", ids, LOG_OUTPUTS)
        return sev, cat, anom.reshape(anom.shape[0])

    def _run_batch(self, task: str, ids: npt.NDArray[np.int32], names: tuple[str, ...]) -> list[FloatArray]:
        ids = np.asarray(ids, dtype=np.int32)
        width = self.log_max_len if task == "logs" else self.max_len
        if ids.ndim != 2 or ids.shape[1] != width:
            raise InferenceError(f"{task} ids must have shape (B, {width}), got {ids.shape}")
        graph = self._graphs.get(task)
        if graph is None:
            raise InferenceError(f"this model was opened without its {task} graph (has {list(self._graphs)})")
        run_many = getattr(graph, "run_many", None)  # batching executors take all rows at once
        if run_many is None and ids.shape[0] == 1:  # one utterance: no splitting, no joining
            out = graph.run({"ids": ids})
            return [np.asarray(out[n], dtype=np.float32) for n in names]
        feeds = [{"ids": ids[i : i + 1]} for i in range(ids.shape[0])]
        rows = run_many(feeds) if run_many is not None else [graph.run(f) for f in feeds]
        return [np.concatenate([r[n] for r in rows], axis=0).astype(np.float32, copy=False) for n in names]

    def close(self) -> None:
        for graph in self._graphs.values():
            graph.close()
        self._runners.clear()


def _unit_rows(emb: FloatArray) -> FloatArray:
    """``emb``'s rows scaled to length 1. This runs on every transcript when custom intents are
    loaded: one row, the common case, costs a dot product and a scale (an einsum and a division
    took about 20 us of a 0.3 ms recognition on the 2-core development machine)."""
    if emb.shape[0] == 1:
        row = emb[0]
        scaled: FloatArray = emb * np.float32(1.0 / max(float(np.sqrt(np.dot(row, row))), 1e-12))
        return scaled
    norm = np.sqrt(np.einsum("ij,ij->i", emb, emb))[:, None]
    rows: FloatArray = emb / np.maximum(norm, np.float32(1e-12))
    return rows


def open_tokenizer(bundle: Bundle, max_len: int, task: str = "intents") -> Tokenizer | WordPieceTokenizer:
    """The bundle's tokenizer for ``task`` (``Bundle.tokenizer_entry``): a sentencepiece model,
    or word pieces (``type`` ``wordpiece``: a bundle of the teacher,
    ``firmware_tools/model/teacher_bundle.py``)."""
    entry = bundle.tokenizer_entry(task)
    kind = str(entry.get("type", "sentencepiece-unigram"))
    path = bundle.path / str(entry["file"])
    if kind == "wordpiece":
        return WordPieceTokenizer.from_file(path, max_len)
    if not kind.startswith("sentencepiece"):
        raise BundleError(f"{bundle.path}: unknown tokenizer type {kind!r} (sentencepiece or wordpiece)")
    return Tokenizer(path, max_len)


def _writes(bundle: Bundle, specs: Mapping[str, SegmentSpec], variant: str, name: str) -> bool:
    """Whether the intent graph's last segment writes the value ``name``."""
    graph = bundle.graph("intents", variant)
    last = specs.get(graph[-1]) if graph else None
    return last is not None and any(port["name"] == name for port in last.outputs)
