"""Text -> intent + slots with the bundle's model.

Steps: tokenize (fixed window), run the intent graph, calibrate the intent distribution with
the manifest's temperature, reject out-of-scope (the ``__none__`` class when its probability
reaches the manifest's ``oos_bar``, or a confidence below that intent's threshold), decode BIO
tags into character spans, and hand the spans to ``edge_agent.nlu.slots.build_slots`` for
normalization and home resolution.

With custom intents loaded (``load_custom``), the same model run also gives the utterance's
sentence embedding, and ``edge_agent.nlu.custom`` decides between the built-in result, a custom
intent and out of scope.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from edge_agent.nlu.home import Home
from edge_agent.nlu.schema import OUT_OF_SCOPE
from edge_agent.nlu.slots import build_slots, home_supports, refine_intent
from edge_agent.records.intent import IntentResult, Span
from edge_agent.runtime.model import Model
from edge_agent.runtime.tokenizer import Encoded

if TYPE_CHECKING:
    from edge_agent.nlu.custom import CustomIndex, CustomSentences

__all__ = ["IntentRecognizer", "decode_spans"]


def softmax(z: npt.NDArray[np.float32], temperature: float = 1.0) -> npt.NDArray[np.float32]:
    z = np.asarray(z, dtype=np.float32)
    if temperature != 1.0:
        z = z / np.float32(temperature)
    e: npt.NDArray[np.float32] = np.exp(z - z.max(axis=-1, keepdims=True))
    e /= e.sum(axis=-1, keepdims=True)
    return e


class IntentRecognizer:
    """Recognize intents for a batch of texts; thread-compatible (one model per thread)."""

    def __init__(
        self,
        model: Model,
        home: Home | None = None,
        calibration: Mapping[str, Any] | None = None,
        slot_repair: bool = True,
    ) -> None:
        """``calibration``: temperature and thresholds of the model's variant (default: the
        manifest's, which are the default variant's); ``slot_repair=False``: the tagger's spans,
        normalized only (build_slots)."""
        self.model = model
        self.home = home
        self.slot_repair = slot_repair
        self.intents: list[str] = model.labels["intents"]
        self.tags: list[str] = model.labels["slot_tags"]
        if calibration is None:
            calibration = model.bundle.manifest.get("calibration", {})
        self.temperature = float(calibration.get("temperature", 1.0))
        thresholds: Mapping[str, float] = calibration.get("intent_thresholds", {})
        self.thresholds = np.array([float(thresholds.get(name, 0.0)) for name in self.intents], np.float32)
        self.oos_index = self.intents.index(OUT_OF_SCOPE) if OUT_OF_SCOPE in self.intents else -1
        # out of scope wins only with at least this probability, else the best in-scope intent
        # answers (chosen by the build on sources the model never trained on: a rejection rule
        # fitted where the model is sure of itself rejects too much elsewhere)
        self.oos_bar = float(calibration.get("oos_bar", 0.0))
        self.calibration: Mapping[str, Any] = calibration
        self.custom: CustomIndex | None = None  # replaced whole (a reload), read once per call

    def load_custom(self, sentences: CustomSentences | None) -> CustomIndex | None:
        """Embed ``sentences``' examples with this recognizer's model and recognize their intents
        from the next call on (None: none). Raises ``CustomSentencesError`` when the model has no
        sentence embedding; the intents in use then stay as they were. Not thread-safe with
        ``recognize`` (the model is shared): callers hold the lock they recognize under."""
        if sentences is None:
            self.custom = None
            return None
        from edge_agent.nlu.custom import CustomSettings, build_index

        settings = CustomSettings.from_calibration(self.calibration)
        index = build_index(sentences, self.model, self.intents, settings)
        self.custom = index
        return index

    def recognize(self, texts: Sequence[str], context_area: str | None = None) -> list[IntentResult]:
        if not texts:
            return []
        encoded = [self.model.tokenizer.encode(t) for t in texts]
        ids = encoded[0].ids[None] if len(encoded) == 1 else np.stack([e.ids for e in encoded])
        custom = self.custom
        if custom is None:
            intent_logits, slot_logits = self.model.run_intents(ids)
            embeddings = None
        else:
            outputs = self.model.run_intent_outputs(ids)  # one run: intents, slots and embedding
            intent_logits, slot_logits, embeddings = (
                outputs.intent_logits,
                outputs.slot_logits,
                outputs.embedding,
            )
        probs = softmax(intent_logits, self.temperature)
        results = []
        for i, (text, enc) in enumerate(zip(texts, encoded, strict=True)):
            result = self._result(text, enc, probs[i], slot_logits[i], context_area)
            if custom is not None and embeddings is not None:
                result = custom.resolve(
                    text,
                    embeddings[i],
                    result,
                    self._taught(text, enc, slot_logits[i], context_area),
                    self.home,
                    context_area,
                    enc.ids,
                )
            results.append(result)
        return results

    def _taught(
        self, text: str, enc: Encoded, slot_logits: npt.NDArray[np.float32], context_area: str | None
    ) -> Any:
        """The result for an intent chosen by its custom examples, slots by the built-in path."""

        def result(intent: str, conf: float) -> IntentResult:
            return self._slotted(text, enc, slot_logits, intent, conf, context_area, None)

        return result

    def _result(
        self,
        text: str,
        enc: Encoded,
        probs: npt.NDArray[np.float32],
        slot_logits: npt.NDArray[np.float32],
        context_area: str | None,
    ) -> IntentResult:
        best = int(probs.argmax())
        if best == self.oos_index and float(probs[best]) < self.oos_bar:
            best = int(np.delete(probs, best).argmax())
            best += int(best >= self.oos_index)
        conf = float(probs[best])
        rejected = best == self.oos_index or conf < float(self.thresholds[best])
        if rejected:
            rescued = self._home_rescue(text, probs)
            if rescued is None:
                return IntentResult(
                    text, None, conf if best == self.oos_index else 1.0 - conf, {}, enc.truncated
                )
            best, conf = rescued, float(probs[rescued])
        return self._slotted(text, enc, slot_logits, self.intents[best], conf, context_area, probs)

    def _slotted(
        self,
        text: str,
        enc: Encoded,
        slot_logits: npt.NDArray[np.float32],
        intent: str,
        conf: float,
        context_area: str | None,
        probs: npt.NDArray[np.float32] | None,
    ) -> IntentResult:
        """``intent`` with its slots from the tagger's spans (``probs``: the intent distribution,
        None for an intent not chosen by the intent head)."""
        spans = decode_spans(enc, slot_logits, self.tags)
        slots = build_slots(text, intent, spans, self.home, context_area, self.slot_repair)
        refined = refine_intent(intent, slots, self.home)
        if refined != intent and refined in self.intents:  # "start Robbie" when Robbie is a vacuum
            if probs is not None:
                conf = max(conf, float(probs[self.intents.index(refined)]))
            intent = refined
            slots = build_slots(text, intent, spans, self.home, context_area, self.slot_repair)
        return IntentResult(text, intent, conf, slots, enc.truncated)

    def _home_rescue(self, text: str, probs: npt.NDArray[np.float32]) -> int | None:
        """A borderline rejection is overturned when the runner-up intent has real support
        (p >= RESCUE_MIN_P) and the text names, word for word, one of the home's entities that intent
        acts on ("is the tablet plugged in?" in a home with a Tablet). Needs a home."""
        if self.home is None:
            return None
        order = [int(i) for i in np.argsort(-probs)[:2]]
        for idx in order:
            if idx == self.oos_index:
                continue
            if float(probs[idx]) >= RESCUE_MIN_P and home_supports(text, self.intents[idx], self.home):
                return idx
            return None
        return None


RESCUE_MIN_P = 0.05


def decode_spans(enc: Encoded, slot_logits: npt.NDArray[np.float32], tags: Sequence[str]) -> list[Span]:
    """BIO tags of the real tokens -> character spans; an I- that does not continue starts a span.

    Each token's tag is its most likely one, with that tag's softmax probability as confidence;
    only the real tokens are computed (a rejected request computes none)."""
    spans: list[Span] = []
    current: list[Any] | None = None  # [start, end, slot, [confidences]]
    rows = np.asarray(slot_logits[: len(enc.offsets)], dtype=np.float32)
    best_index = rows.argmax(axis=-1)
    best = best_index.tolist()
    # the best tag's probability: exp(0) over the sum of exp(logit - best logit)
    peak = np.take_along_axis(rows, best_index[:, None], axis=-1)
    top = (1.0 / np.exp(rows - peak).sum(axis=-1)).tolist()
    for i, (start, end) in enumerate(enc.offsets):
        if end <= start:
            continue  # a bare word-boundary piece carries no text
        tag = tags[best[i]]
        p = top[i]
        if current is not None and tag == f"I-{current[2]}":
            current[1] = end
            current[3].append(p)
            continue
        if current is not None:
            spans.append(_span(current))
            current = None
        if tag != "O":
            current = [start, end, tag[2:], [p]]
    if current is not None:
        spans.append(_span(current))
    return spans


def _span(cur: list[Any]) -> Span:
    return Span(int(cur[0]), int(cur[1]), str(cur[2]), sum(cur[3]) / len(cur[3]))
