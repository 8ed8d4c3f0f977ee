"""The custom sentences embedded by one model, and the custom side of recognizing one utterance.

``build_index`` embeds every example sentence with the model's ``sentence_embedding`` output (the
intent graph's third output; docs/bundle.md), in batches, once per load, and keeps their word
pieces for the overlap of ``lexical.py``. At recognition time the same model run that gives the
built-in intent gives the utterance's embedding and its pieces, so a custom intent costs a
matrix-vector product (examples x embedding size), a sparse one over the examples' pieces and
the decision of ``match.decide``; slots are read only for a custom winner.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from edge_agent.nlu.custom.lexical import Lexical, tokenizer_piece_weights
from edge_agent.nlu.custom.match import (
    CustomSettings,
    decide,
    example_layout,
    intent_cohesion,
    intent_scores,
)
from edge_agent.nlu.custom.sentences import CustomSentences, CustomSentencesError, Example
from edge_agent.nlu.custom.slots import custom_slots
from edge_agent.nlu.home import Home
from edge_agent.nlu.schema import OUT_OF_SCOPE
from edge_agent.records.intent import IntentResult

__all__ = ["BATCH", "NO_EMBEDDING", "CustomIndex", "build_index", "embed_texts", "text_pieces"]

FloatArray = npt.NDArray[np.float32]
IdsArray = npt.NDArray[np.int32]
BATCH = 8  # example sentences per model call while embedding (its outputs are kept until joined)
NO_EMBEDDING = (
    "this model bundle has no sentence embedding; custom intents need a bundle whose intents graph "
    "has the sentence_embedding output (docs/bundle.md), i.e. a newer model than this one"
)
# the built-in decision with an intent forced: (intent, confidence) -> result with the built-in slots
BuiltinSlots = Callable[[str, float], IntentResult]


class CustomIndex:
    """Example sentences ordered by intent with their unit vectors; ``builtin``: the model's
    intents (a custom intent of one of these names teaches that intent a phrasing);
    ``pieces``: the examples' token ids and the piece weights (``lexical.py``), needed when
    ``settings.lexical_weight`` is set (without them the embedding alone is used)."""

    def __init__(
        self,
        sentences: CustomSentences,
        vectors: FloatArray,
        builtin: Sequence[str],
        settings: CustomSettings | None = None,
        pieces: tuple[Sequence[IdsArray], FloatArray] | None = None,
    ) -> None:
        if len(vectors) != len(sentences.examples):
            raise ValueError(f"{len(vectors)} vectors for {len(sentences.examples)} examples")
        if OUT_OF_SCOPE in sentences.intents:
            raise CustomSentencesError(f"{OUT_OF_SCOPE!r} is reserved for out of scope")
        order = {name: i for i, name in enumerate(sentences.intents)}
        rank = sorted(range(len(sentences.examples)), key=lambda i: order[sentences.examples[i].intent])
        self.sentences = sentences
        self.examples: tuple[Example, ...] = tuple(sentences.examples[i] for i in rank)
        named = {e.intent for e in self.examples}
        self.intents: tuple[str, ...] = tuple(n for n in sentences.intents if n in named)
        labels = np.array([self.intents.index(e.intent) for e in self.examples], dtype=np.intp)
        self.starts = np.searchsorted(labels, np.arange(len(self.intents))).astype(np.intp)
        self.layout = example_layout(self.starts, len(self.examples))
        self.vectors: FloatArray = np.asarray(vectors, dtype=np.float32)[rank]  # a copy: scaled in place
        self.vectors /= np.maximum(np.linalg.norm(self.vectors, axis=1, keepdims=True), np.float32(1e-12))
        self.builtin = frozenset(builtin)
        self.settings = settings = settings or CustomSettings()
        self.lexical: Lexical | None = None
        self._example_ids: list[IdsArray] = []
        if pieces is not None and settings.lexical_weight > 0:
            ids, weights = pieces
            self._example_ids = [np.asarray(ids[i]) for i in rank]
            self.lexical = Lexical(weights, self._example_ids)
        templates = np.array([e.template for e in self.examples], dtype=np.intp)
        self.cohesion = cohesion = intent_cohesion(
            self.vectors, self.starts, templates, settings.top_k, self._block
        )
        offsets = settings.cohesion_weight * (cohesion - settings.cohesion_ref)
        self.offsets: FloatArray = np.where(np.isnan(cohesion), 0.0, offsets).astype(np.float32)

    def summary(self) -> dict[str, Any]:
        """Counts for the log and the control reply."""
        taught = sorted(i for i in self.intents if i in self.builtin)
        return {
            "intents": len(self.intents),
            "examples": len(self.examples),
            "taught": taught,
            "files": list(self.sentences.files),
        }

    @property
    def custom_names(self) -> list[str]:
        """The intents this set adds (those named like a built-in intent teach it instead)."""
        return [i for i in self.intents if i not in self.builtin]

    def similarities(self, embedding: FloatArray, ids: IdsArray | None = None) -> FloatArray:
        """The similarity of one utterance to every example: the cosine of its embedding (unit
        length, as ``Model.run_intent_outputs`` gives it), mixed with the word-piece overlap of
        its token ``ids`` when the settings ask for it (``ids`` None: the embedding alone)."""
        return self._mixed(self.vectors @ embedding, ids)

    def _mixed(self, cosines: FloatArray, ids: IdsArray | None) -> FloatArray:
        if self.lexical is None or ids is None:
            return cosines
        w = np.float32(self.settings.lexical_weight)
        mixed: FloatArray = (1 - w) * cosines + w * self.lexical.similarities(ids)
        return mixed

    def _below_steal(self, cosines: FloatArray) -> bool:
        """Whether no mixed similarity can reach ``steal`` whatever the word overlap (at most 1)."""
        w = self.settings.lexical_weight if self.lexical is not None else 0.0
        return (1 - w) * float(cosines.max()) + w < self.settings.steal

    def _block(self, start: int, end: int) -> FloatArray:
        """Similarities among examples ``start:end``, as ``similarities`` mixes them."""
        sims: FloatArray = self.vectors[start:end] @ self.vectors[start:end].T
        if self.lexical is None:
            return sims
        w = np.float32(self.settings.lexical_weight)
        lexical = self.lexical.block(start, end, self._example_ids[start:end])
        mixed: FloatArray = (1 - w) * sims + w * lexical
        return mixed

    def best(self, embedding: FloatArray, ids: IdsArray | None = None) -> tuple[int, float, FloatArray]:
        """(intent index, its score less its cohesion offset, the similarity to every example)
        for one utterance (``similarities``)."""
        sims = self.similarities(embedding, ids)
        return (*self._best_of(sims), sims)

    def _best_of(self, sims: FloatArray) -> tuple[int, float]:
        scores = intent_scores(sims, self.layout, self.settings.top_k) - self.offsets
        best = int(scores.argmax())
        return best, float(scores[best])

    def span(self, intent: int) -> slice:
        """Where intent number ``intent``'s examples are (in ``examples`` and ``vectors``)."""
        start = int(self.starts[intent])
        end = int(self.starts[intent + 1]) if intent + 1 < len(self.starts) else len(self.examples)
        return slice(start, end)

    def ranked(self, intent: int, sims: FloatArray) -> list[Example]:
        """The examples of intent number ``intent``, the nearest first."""
        span = self.span(intent)
        order = np.argsort(-sims[span], kind="stable")
        return [self.examples[span.start + int(i)] for i in order]

    def resolve(
        self,
        text: str,
        embedding: FloatArray,
        builtin: IntentResult,
        builtin_slots: BuiltinSlots,
        home: Home | None = None,
        context_area: str | None = None,
        ids: IdsArray | None = None,
    ) -> IntentResult:
        """The final result of one utterance given the built-in one (``match.decide``); ``ids``:
        its token ids (the word-piece overlap; None: the embedding alone)."""
        settings = self.settings
        cosines: FloatArray = self.vectors @ embedding
        confident = builtin.intent is not None and builtin.confidence + settings.margin > 1.0
        if confident and self._below_steal(cosines):
            # no custom confidence can beat it by the margin, and these are not the user's own
            # words: the common case of a clear built-in command, at the cost of one product
            return builtin
        sims = self._mixed(cosines, ids)
        if confident and float(sims.max()) < settings.steal:
            return builtin
        best, score = self._best_of(sims)
        name = self.intents[best]
        nearest = float(sims[self.span(best)].max())
        decision = decide(builtin.intent, builtin.confidence, name, score, settings, self.builtin, nearest)
        if decision.kind == "builtin":
            return builtin
        if decision.kind == "taught":
            return builtin_slots(name, decision.confidence)
        slots = custom_slots(text, name, self.ranked(best, sims), self.sentences, home, context_area)
        return replace(builtin, intent=name, confidence=decision.confidence, slots=slots)


def text_pieces(model: Any, texts: Sequence[str]) -> tuple[list[IdsArray], FloatArray]:
    """The token ids of ``texts`` and the piece weights of ``model``'s tokenizer (``lexical.py``)."""
    tokenizer = model.tokenizer
    return [tokenizer.encode(t).ids for t in texts], tokenizer_piece_weights(tokenizer)


def embed_texts(model: Any, texts: Sequence[str]) -> FloatArray:
    """Sentence embeddings of ``texts`` (one model call per ``BATCH``); the model must have them."""
    if not getattr(model, "has_sentence_embedding", False):
        raise CustomSentencesError(NO_EMBEDDING)
    out: FloatArray | None = None
    for start in range(0, len(texts), BATCH):
        ids = np.stack([model.tokenizer.encode(t).ids for t in texts[start : start + BATCH]])
        embedding = model.run_intent_outputs(ids).embedding
        if embedding is None:
            raise CustomSentencesError(NO_EMBEDDING)
        if out is None:
            out = np.empty((len(texts), embedding.shape[1]), dtype=np.float32)
        out[start : start + len(embedding)] = embedding
    return out if out is not None else np.zeros((0, 1), np.float32)


def build_index(
    sentences: CustomSentences, model: Any, builtin: Sequence[str], settings: CustomSettings
) -> CustomIndex:
    """Embed ``sentences``' examples with ``model`` (``CustomSentencesError`` without an embedding)."""
    texts = [e.text for e in sentences.examples]
    vectors = embed_texts(model, texts)
    pieces = text_pieces(model, texts) if settings.lexical_weight > 0 else None
    return CustomIndex(sentences, vectors, builtin, settings, pieces)
