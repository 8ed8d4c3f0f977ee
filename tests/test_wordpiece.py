"""The agent's WordPiece tokenizer (edge_agent/runtime/wordpiece.py) cuts text as the build's
``tokenizers`` package does with the teacher's own tokenizer.json: the same ids and the same
character offsets, on the repository's request sets, generated requests and log lines, and texts
made to hit the normalizer's corners."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from edge_agent.errors import BundleError
from edge_agent.runtime.wordpiece import WordPieceTokenizer

DATA = Path(__file__).resolve().parent / "data"
WINDOW = 32

CORNERS = [
    "",
    "   ",
    "Turn ON the Kitchen Lights!!",
    "what's the weather in São Paulo, Zürich or Kraków?",
    "set the thermostat to 21.5°C — please…",
    "naïve café crème brûlée",
    "İstanbul ΣΊΣΥΦΟΣ straße ﬁle",
    "東京の天気は? 今日",
    "tab\there\nnew line\r\nand\u00a0nbsp\u2003em space",
    "zero\u200bwidth and soft\u00adhyphen and bell\x07 and nul\x00 and \ufffd",
    "emoji 🎵 play music 🎶 now",
    "what is [MASK] and [CLS] in a text",
    "a" * 120 + " long word",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "kernel: [  12.345678] usb 1-1.2: new high-speed USB device number 3 using xhci_hcd",
    "e-mail me@example.com at 10:30 a.m. re: #42 (urgent) {json: [1, 2]} <tag/> ~user ^_^",
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty twenty-one twenty-two twenty-three",
]


def _texts() -> list[str]:
    texts = list(CORNERS)
    for name in ("inscope_dev.jsonl", "probe_dev.jsonl", "probe2_dev.jsonl", "probe3_dev.jsonl"):
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts.append(json.loads(line)["text"])
    texts += [x for x in (DATA / "oos_dev.txt").read_text(encoding="utf-8").splitlines() if x.strip()]
    for line in (DATA / "gateway_lines_dev.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            texts.append(str(json.loads(line).get("line", "")))
    rng = random.Random(5)
    # random soup of what transcripts and logs hold: ASCII, Latin, Greek and Cyrillic letters,
    # combining accents, general punctuation and spaces, CJK, controls. (Rare characters added to
    # Unicode lately are left out: the tokenizers package's tables predate them; see the module.)
    blocks = [(0, 0x80), (0x80, 0x250), (0x300, 0x370), (0x370, 0x3FF), (0x400, 0x4FF), (0x2000, 0x2070),
              (0x3000, 0x3040), (0x4E00, 0x4F00), (0xFF00, 0xFF60)]  # fmt: skip
    for _ in range(400):
        texts.append("".join(chr(rng.randrange(*rng.choice(blocks))) for _ in range(rng.randrange(1, 60))))
    return texts


@pytest.fixture(scope="module")
def pair() -> tuple[WordPieceTokenizer, object]:
    from tokenizers import Tokenizer  # the build extra (edge-agent[train]), which the tests install

    from firmware_tools.model.pretrained import default_zip, load_checkpoint

    spec = load_checkpoint(default_zip()).tokenizer_json
    ref = Tokenizer.from_str(spec)
    ref.enable_truncation(max_length=WINDOW)
    ref.enable_padding(length=WINDOW, pad_id=0)
    return WordPieceTokenizer.from_tokenizer_json(spec, WINDOW), ref


def test_ids_and_offsets_are_the_tokenizers_packages(pair: tuple[WordPieceTokenizer, object]) -> None:
    ours, ref = pair
    texts = _texts()
    assert len(texts) > 500
    for text, enc in zip(texts, ref.encode_batch(texts), strict=True):  # type: ignore[attr-defined]
        got = ours.encode(text)
        np.testing.assert_array_equal(got.ids, np.array(enc.ids, np.int32), err_msg=repr(text))
        n = len(got.offsets)
        assert n == int(sum(enc.attention_mask)), repr(text)
        assert got.offsets == [tuple(o) for o in enc.offsets[:n]], repr(text)
        assert got.truncated == bool(enc.overflowing), repr(text)


def test_the_window_holds_cls_pieces_sep_and_padding(pair: tuple[WordPieceTokenizer, object]) -> None:
    ours, _ = pair
    enc = ours.encode("turn on the lights")
    n = len(enc.offsets)
    assert enc.ids[0] == ours.cls_id and enc.ids[n - 1] == ours.sep_id and (enc.ids[n:] == ours.pad_id).all()
    assert [("turn on the lights"[b:e]) for b, e in enc.offsets[1:-1]] == ["turn", "on", "the", "lights"]
    assert not enc.truncated and ours.encode("word " * 40).truncated


def test_a_vocabulary_without_the_special_tokens_or_a_bad_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="no \\[CLS\\]"):
        WordPieceTokenizer({"[UNK]": 0, "[SEP]": 1, "[PAD]": 2}, 8)
    with pytest.raises(BundleError, match="window"):
        WordPieceTokenizer({"[UNK]": 0, "[CLS]": 3, "[SEP]": 1, "[PAD]": 2}, 2)
    bad = tmp_path / "tokenizer.json"
    bad.write_text('{"model": {"type": "BPE", "vocab": {}}}', encoding="utf-8")
    with pytest.raises(BundleError, match="not WordPiece"):
        WordPieceTokenizer.from_file(bad, 8)
    with pytest.raises(BundleError, match="cannot load"):
        WordPieceTokenizer.from_file(tmp_path / "missing.json", 8)
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(BundleError, match="cannot read"):
        WordPieceTokenizer.from_file(bad, 8)


def test_the_bundle_says_which_tokenizer_it_reads(tmp_path: Path) -> None:
    from edge_agent.runtime.bundle import Bundle
    from edge_agent.runtime.model import open_tokenizer

    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "on": 4}
    spec = {"model": {"type": "WordPiece", "vocab": vocab}, "normalizer": {"type": "BertNormalizer"}}
    (tmp_path / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    tok = {"file": "tokenizer.json", "type": "wordpiece", "max_len": 6}
    got = open_tokenizer(Bundle(tmp_path, {"tokenizer": tok}), 6)
    assert isinstance(got, WordPieceTokenizer) and got.encode("On").ids.tolist() == [2, 4, 3, 0, 0, 0]
    with pytest.raises(BundleError, match="unknown tokenizer type 'bpe'"):
        open_tokenizer(Bundle(tmp_path, {"tokenizer": {**tok, "type": "bpe"}}), 6)
