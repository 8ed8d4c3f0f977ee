"""The pretrained encoder read by firmware_tools/model/pretrained.py, run through the Keras layers
of firmware_tools/model/teacher.py, gives sentence embeddings that make sense: paraphrases are
close, different requests are not. Run by tests/test_teacher.py in a child process."""

from __future__ import annotations

import numpy as np

from firmware_tools.model.pretrained import default_zip, load_checkpoint
from firmware_tools.model.teacher import lower_features


def main() -> None:
    ckpt = load_checkpoint(default_zip())
    assert ckpt.config.layers == 6 and ckpt.config.width == 384, ckpt.config
    texts = ["turn on the light", "switch the lamp on", "will it rain tomorrow", "what is the forecast"]
    wp = ckpt.tokenize(texts, 16)
    assert wp.offsets[0, 1].tolist() == [0, 4]  # "turn", after [CLS]
    feats = lower_features(ckpt, wp, ckpt.config.layers).astype(np.float32)
    m = wp.mask[:, :, None]
    emb = (feats * m).sum(1) / m.sum(1)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    sim = emb @ emb.T
    assert sim[0, 1] > sim[0, 2] + 0.3 and sim[0, 1] > sim[0, 3] + 0.3, sim
    assert sim[2, 3] > sim[2, 0] + 0.2, sim
    # padding is masked: a sentence alone in a short window has the features it had in a batch
    alone = ckpt.tokenize(texts[2:3], 8)
    solo = lower_features(ckpt, alone, ckpt.config.layers).astype(np.float32)
    n = int(alone.mask.sum())
    np.testing.assert_allclose(solo[0, :n], feats[2, :n], atol=2e-2)
    print("encoder checks passed")


if __name__ == "__main__":
    main()
