"""firmware_tools/model/mpnet.py on a small MPNet checkpoint made here with random weights (the
real one is 420 MB and not installed by the tests): its shape comes from config.json, rows are
unit length, padding is masked (a text has the same embedding alone and beside longer texts),
positions and the relative-position bias take part (word order changes the embedding), and the
build that embeds rows gets the numbers a later build reads back from its work directory. Run by
tests/test_second_teacher.py in a child process: TensorFlow stays out of the pytest process."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run by runpy: the helpers beside it
from childcheck import safetensors_bytes


def make_checkpoint(folder: Path, words: list[str], width: int = 16, heads: int = 2, layers: int = 2) -> None:
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, **{w: i + 4 for i, w in enumerate(words)}}
    tok = Tokenizer(WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = Whitespace()
    tok.save(str(folder / "tokenizer.json"))
    rng = np.random.default_rng(0)

    def r(*shape: int) -> np.ndarray:
        return rng.normal(0.0, 0.3, shape).astype(np.float32)

    w = {
        "embeddings.word_embeddings.weight": r(len(vocab), width),
        "embeddings.position_embeddings.weight": r(40, width),
        "embeddings.LayerNorm.weight": np.ones(width, np.float32),
        "embeddings.LayerNorm.bias": np.zeros(width, np.float32),
        "encoder.relative_attention_bias.weight": r(32, heads) * 5,
    }
    for i in range(layers):
        p = f"encoder.layer.{i}"
        for n in ("q", "k", "v", "o"):
            w[f"{p}.attention.attn.{n}.weight"], w[f"{p}.attention.attn.{n}.bias"] = r(width, width), r(width)
        w[f"{p}.intermediate.dense.weight"], w[f"{p}.intermediate.dense.bias"] = (
            r(2 * width, width),
            r(2 * width),
        )
        w[f"{p}.output.dense.weight"], w[f"{p}.output.dense.bias"] = r(width, 2 * width), r(width)
        for n in ("attention.LayerNorm", "output.LayerNorm"):
            w[f"{p}.{n}.weight"], w[f"{p}.{n}.bias"] = np.ones(width, np.float32), np.zeros(width, np.float32)
    (folder / "model.safetensors").write_bytes(safetensors_bytes(w))
    cfg = {"hidden_size": width, "num_attention_heads": heads, "num_hidden_layers": layers}
    (folder / "config.json").write_text(json.dumps(cfg))


def check_the_build_reads_what_it_kept(folder: Path) -> None:
    """The build that embeds the rows and a later build that reads them from the work directory
    get the same numbers (the kept copy is float16), so both fit the same second teacher."""
    from firmware_tools.model import build as b

    texts = ["turn on the kitchen light", "will it rain tomorrow", "rain in town please"]
    with tempfile.TemporaryDirectory() as work:
        cache = b._StageCache(Path(work), (), lambda _: None)
        first = b._mpnet_texts(folder, texts, cache, lambda _: None)
        again = b._mpnet_texts(folder, texts, cache, lambda _: None)
    assert first.dtype == again.dtype == np.float32
    np.testing.assert_array_equal(first, again)


def main() -> int:
    from firmware_tools.model.mpnet import MPNetEmbedder

    words = [
        "turn",
        "on",
        "the",
        "kitchen",
        "light",
        "please",
        "will",
        "it",
        "rain",
        "tomorrow",
        "in",
        "town",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        make_checkpoint(folder, words)
        embed = MPNetEmbedder(folder)
        check_the_build_reads_what_it_kept(folder)
    texts = ["turn on the light", "will it rain tomorrow in the town please", "light the on turn", "rain"]
    out = embed(texts, batch=8)
    assert out.shape == (4, 16), out.shape
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    alone = embed(texts[:1])
    np.testing.assert_allclose(alone[0], out[0], atol=1e-5)  # padding beside longer rows is masked
    assert float(out[0] @ out[2]) < 0.9999, "word order must change the embedding"
    assert embed([]).shape == (0, 16)
    print("mpnet checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
