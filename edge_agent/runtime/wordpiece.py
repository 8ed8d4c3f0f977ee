"""BERT's uncased WordPiece tokenizer in plain Python, for graphs built on the teacher's encoder.

The teacher (all-MiniLM-L6-v2, fine-tuned by the build) reads word pieces, not the student's
sentencepiece model. At build time the ``tokenizers`` package cuts them; an agent on a gateway
should not need that package (a Rust extension that a Yocto image would have to build), so this
module does the same cut from the encoder's ``tokenizer.json``:

1. special tokens written in the text (``[CLS]``, ``[MASK]``...) are kept whole;
2. the text is cleaned (NUL, U+FFFD and control characters dropped, every whitespace character a
   space), CJK ideographs get a space on each side, accents are stripped (NFD, combining marks
   dropped) and every character is lower-cased;
3. words are split at whitespace, and every punctuation character is a word of its own;
4. each word is cut greedily into the longest pieces of the vocabulary (``##`` before a piece that
   continues a word); a word with no such cut, or longer than 100 characters, is ``[UNK]``;
5. ``[CLS]`` pieces ``[SEP]``, cut to the window and padded with ``[PAD]``.

Offsets are character offsets into the original text, one per position of the window
(``(0, 0)`` for ``[CLS]``, ``[SEP]`` and padding), as the ``tokenizers`` package gives them; the
tests compare both on many texts.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import numpy as np
import numpy.typing as npt

from edge_agent.errors import BundleError
from edge_agent.runtime.tokenizer import Encoded

__all__ = ["WordPieceTokenizer"]

_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)
# control, format and private-use characters are dropped; unassigned ones are kept (and make their
# word [UNK]), as the tokenizers package does. Its Unicode tables are older than Python's: a
# character assigned since (a new Arabic format mark, say) may be cut differently; common text is not.
_DROPPED = {"Cc", "Cf", "Co"}
_PUNCT = {"Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps"}
# what Rust's char::is_whitespace accepts (Unicode White_Space), which the tokenizers package uses
_WHITE = set("\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | {
    chr(c) for c in range(0x2000, 0x200B)
}


def _is_cjk(c: str) -> bool:
    o = ord(c)
    return any(a <= o <= b for a, b in _CJK)


def _is_punct(c: str) -> bool:
    return (c.isascii() and not c.isalnum() and c.isprintable() and not c.isspace()) or (
        unicodedata.category(c) in _PUNCT
    )


class WordPieceTokenizer:
    """``encode`` gives an ``Encoded`` of ``max_len`` positions (``[CLS]`` and ``[SEP]`` included)."""

    def __init__(
        self,
        vocab: dict[str, int],
        max_len: int,
        *,
        unk: str = "[UNK]",
        cls: str = "[CLS]",
        sep: str = "[SEP]",
        pad: str = "[PAD]",
        prefix: str = "##",
        max_word_chars: int = 100,
        specials: tuple[str, ...] = (),
    ) -> None:
        if max_len < 3:
            raise BundleError(f"word-piece window must hold [CLS], a piece and [SEP], got {max_len}")
        missing = [t for t in (unk, cls, sep, pad) if t not in vocab]
        if missing:
            raise BundleError(f"word-piece vocabulary has no {', '.join(missing)}")
        self.vocab = vocab
        self.max_len = max_len
        self.vocab_size = max(vocab.values()) + 1
        self.unk_id, self.cls_id, self.sep_id, self.pad_id = (vocab[t] for t in (unk, cls, sep, pad))
        self.prefix = prefix
        self.max_word_chars = max_word_chars
        found = sorted((s for s in specials if s in vocab), key=len, reverse=True)
        self._specials = re.compile("|".join(map(re.escape, found))) if found else None

    @classmethod
    def from_tokenizer_json(cls, text: str, max_len: int) -> WordPieceTokenizer:
        """From a ``tokenizers`` JSON file's text (BERT's uncased WordPiece only)."""
        try:
            spec = json.loads(text)
            model = spec["model"]
            if model.get("type") != "WordPiece":
                raise BundleError(f"tokenizer model {model.get('type')!r} is not WordPiece")
            norm = spec.get("normalizer") or {}
            if norm.get("type") != "BertNormalizer" or not norm.get("lowercase", True):
                raise BundleError("only BERT's uncased normalizer is supported")
            specials = tuple(t["content"] for t in spec.get("added_tokens", ()) if t.get("special"))
            return cls(
                {str(k): int(v) for k, v in model["vocab"].items()},
                max_len,
                unk=model.get("unk_token", "[UNK]"),
                prefix=model.get("continuing_subword_prefix", "##"),
                max_word_chars=int(model.get("max_input_chars_per_word", 100)),
                specials=specials,
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise BundleError(f"cannot read the word-piece tokenizer: {exc}") from exc

    @classmethod
    def from_file(cls, path: str | Path, max_len: int) -> WordPieceTokenizer:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise BundleError(f"cannot load tokenizer {path}: {exc}") from exc
        return cls.from_tokenizer_json(text, max_len)

    def piece_weights(self) -> npt.NDArray[np.float32]:
        """Per piece id, how much it counts in the word overlap of custom intents
        (``nlu/custom/lexical.py``): 1, and 0 for bracketed pieces (``[CLS]``, ``[unused7]``...)."""
        out = np.ones(self.vocab_size, dtype=np.float32)
        for piece, i in self.vocab.items():
            if piece.startswith("[") and piece.endswith("]"):
                out[i] = 0.0
        return out

    # -- encoding ------------------------------------------------------------------------------

    def pieces(self, text: str) -> list[tuple[int, int, int]]:
        """(id, char start, char end) of every piece of ``text``, without ``[CLS]``/``[SEP]``."""
        out: list[tuple[int, int, int]] = []
        at = 0
        for m in self._specials.finditer(text) if self._specials is not None else ():
            out += self._plain(text, at, m.start())
            out.append((self.vocab[m.group()], m.start(), m.end()))
            at = m.end()
        return out + self._plain(text, at, len(text))

    def encode(self, text: str) -> Encoded:
        found = self.pieces(text)
        room = self.max_len - 2
        truncated = len(found) > room
        found = found[:room]
        ids = np.full(self.max_len, self.pad_id, dtype=np.int32)
        ids[0] = self.cls_id
        ids[1 : 1 + len(found)] = [p[0] for p in found]
        ids[1 + len(found)] = self.sep_id
        offsets = [(0, 0)] + [(b, e) for _, b, e in found] + [(0, 0)]
        return Encoded(ids, offsets, truncated)

    def _plain(self, text: str, start: int, end: int) -> list[tuple[int, int, int]]:
        chars, spans = self._normalize(text, start, end)
        out: list[tuple[int, int, int]] = []
        word: list[int] = []  # positions in ``chars`` of the word being read
        for i, c in enumerate(chars):
            if c in _WHITE:
                out += self._word(chars, spans, word)
                word = []
            elif _is_punct(c):
                out += self._word(chars, spans, word)
                out += self._word(chars, spans, [i])
                word = []
            else:
                word.append(i)
        return out + self._word(chars, spans, word)

    def _normalize(self, text: str, start: int, end: int) -> tuple[list[str], list[list[int]]]:
        """The normalized characters of ``text[start:end]`` and the original [start, end) of each
        (a dropped character belongs to no piece: the pieces around it do not cover it)."""
        chars: list[str] = []
        spans: list[list[int]] = []
        for i in range(start, end):
            c = text[i]
            if c == "\0" or c == "\ufffd" or (c not in "\t\n\r" and unicodedata.category(c) in _DROPPED):
                kept = ""
            elif c in _WHITE:
                kept = " "
            elif _is_cjk(c):
                kept = f" {c} "
            else:
                nfd = unicodedata.normalize("NFD", c)
                kept = "".join(d for d in nfd if unicodedata.category(d) != "Mn").lower()
            for low in kept:
                chars.append(low)
                spans.append([i, i + 1])
        return chars, spans

    def _word(self, chars: list[str], spans: list[list[int]], word: list[int]) -> list[tuple[int, int, int]]:
        if not word:
            return []
        text = "".join(chars[i] for i in word)
        first, last = spans[word[0]][0], spans[word[-1]][1]
        if len(text) > self.max_word_chars:
            return [(self.unk_id, first, last)]
        out = []
        at = 0
        while at < len(text):
            stop = len(text)
            while stop > at:
                piece = text[at:stop] if at == 0 else self.prefix + text[at:stop]
                if piece in self.vocab:
                    break
                stop -= 1
            if stop == at:
                return [(self.unk_id, first, last)]
            out.append((self.vocab[piece], spans[word[at]][0], spans[word[stop - 1]][1]))
            at = stop
        return out
