"""The user's own intents, from Home Assistant custom-sentences files (docs/intents.md, "Custom intents").

``sentences`` reads and expands the files (hassil's template parser), ``index`` embeds the
example sentences with the model and resolves an utterance, ``match`` is the decision between
built-in, custom and out of scope, ``slots`` reads a custom intent's slots from the utterance.
"""

from edge_agent.nlu.custom.index import NO_EMBEDDING, CustomIndex, build_index, embed_texts, text_pieces
from edge_agent.nlu.custom.match import (
    CustomSettings,
    Decision,
    decide,
    example_layout,
    fit_logistic,
    intent_cohesion,
    intent_scores,
)
from edge_agent.nlu.custom.sentences import (
    CustomSentences,
    CustomSentencesError,
    Example,
    load_custom_sentences,
    parse_custom_sentences,
)
from edge_agent.nlu.custom.slots import align, custom_slots

__all__ = [
    "NO_EMBEDDING",
    "CustomIndex",
    "CustomSentences",
    "CustomSentencesError",
    "CustomSettings",
    "Decision",
    "Example",
    "align",
    "build_index",
    "custom_slots",
    "decide",
    "embed_texts",
    "example_layout",
    "fit_logistic",
    "intent_cohesion",
    "intent_scores",
    "load_custom_sentences",
    "parse_custom_sentences",
    "text_pieces",
]
