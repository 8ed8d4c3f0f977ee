"""Run-time tokenizer: the bundle's sentencepiece model with a fixed window.

Normalization (NFKC + case folding) is part of the sentencepiece model itself, so training and
run time cannot disagree. Offsets are character offsets into the *original* text (end exclusive),
which is what slot spans are reported in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import sentencepiece as spm

from edge_agent.errors import BundleError

__all__ = ["PAD_ID", "Encoded", "Tokenizer"]

PAD_ID = 0
# How this sentencepiece reports piece offsets (see Tokenizer._pieces)
_OFFSET_MAPPING = hasattr(spm.SentencePieceProcessor, "EncodeAsOffsetMapping")
# Text beyond this many characters per token of window can never reach the model; cutting it
# first keeps a 100 kB line as cheap as a short one.
_CHARS_PER_TOKEN_CAP = 24


@dataclass(frozen=True)
class Encoded:
    """Token ids padded to ``max_len``; ``offsets[i]`` = (char start, char end) of real token i."""

    ids: npt.NDArray[np.int32]
    offsets: list[tuple[int, int]]
    truncated: bool

    @property
    def length(self) -> int:
        return len(self.offsets)


class Tokenizer:
    """Wraps a sentencepiece model file; ``encode`` is pure and thread-safe."""

    def __init__(self, model_file: str | Path, max_len: int) -> None:
        if max_len < 1:
            raise BundleError(f"tokenizer max_len must be positive, got {max_len}")
        self.max_len = max_len
        self._sp = spm.SentencePieceProcessor()
        try:
            self._sp.Load(str(model_file))
        except (OSError, RuntimeError) as exc:
            raise BundleError(f"cannot load tokenizer {model_file}: {exc}") from exc
        self.vocab_size = int(self._sp.GetPieceSize())

    @property
    def processor(self) -> spm.SentencePieceProcessor:
        """The sentencepiece model itself (its pieces' scores: ``nlu.custom.lexical``)."""
        return self._sp

    def encode(self, text: str) -> Encoded:
        return self._encode(text, None)

    def encode_with(self, text: str, segment: Callable[[str], list[tuple[int, int, int]]]) -> Encoded:
        """``encode`` with another segmentation: ``segment`` gives the (id, char begin, char end)
        pieces of the (capped) text; the window and offsets are as ``encode``'s. The build's
        sampled segmentations come this way (``firmware_tools/model/subword.py``)."""
        return self._encode(text, segment)

    def _encode(self, text: str, segment: Callable[[str], list[tuple[int, int, int]]] | None) -> Encoded:
        cap = self.max_len * _CHARS_PER_TOKEN_CAP
        cut = len(text) > cap
        src = _encodable(text[:cap] if cut else text)
        found = self._pieces(src) if segment is None else segment(src)
        pieces = [p for p in found if p[0] != PAD_ID]
        truncated = cut or len(pieces) > self.max_len
        pieces = pieces[: self.max_len]
        ids = np.full(self.max_len, PAD_ID, dtype=np.int32)
        ids[: len(pieces)] = [p[0] for p in pieces]
        offsets = [_trim(src, begin, end) for _, begin, end in pieces]
        return Encoded(ids, offsets, truncated)

    def _pieces(self, src: str) -> list[tuple[int, int, int]]:
        """(id, char begin, char end) of each piece of ``src``. Both APIs hand over ids and
        offsets from the C++ side; the SentencePieceText proto would need protobuf, whose import
        costs 2 MB of RSS and 10-25 ms of start-up."""
        if _OFFSET_MAPPING:  # sentencepiece >= 0.2.2: UTF-8 byte offsets
            found = self._sp.encode(src, return_type="offset_mapping", return_bytes=True)
            to_char = _byte_to_char(src)
            pairs = zip(found["ids"], found["offsets"], strict=True)
            return [(i, to_char(b), to_char(e)) for i, (b, e) in pairs]
        # sentencepiece 0.2.0 and 0.2.1: the C++-backed immutable proto, offsets in characters
        spt = self._sp.encode(src, out_type="immutable_proto")  # type: ignore[arg-type]
        return [(p.id, p.begin, p.end) for p in spt.pieces]

    def encode_batch(self, texts: list[str]) -> list[Encoded]:
        return [self.encode(t) for t in texts]

    def piece(self, token_id: int) -> str:
        return str(self._sp.IdToPiece(token_id))


def _encodable(text: str) -> str:
    """Lone surrogates (undecodable input bytes) become '?' one for one, keeping char offsets."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _byte_to_char(text: str) -> Callable[[int], int]:
    if text.isascii():
        return _identity
    table: list[int] = []
    for i, ch in enumerate(text):
        table.extend([i] * len(ch.encode("utf-8")))
    table.append(len(text))
    return lambda b: table[min(b, len(table) - 1)]


def _identity(b: int) -> int:
    return b


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Drop the leading space sentencepiece attaches to a word-initial piece."""
    while start < end and text[start].isspace():
        start += 1
    return start, end
