"""Regenerate tests/golden/default_bundle.json after rebuilding the shipped bundle.

Run: .venv/bin/python tests/golden/make_golden.py   (then review the diff: it pins behaviour)
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from edge_agent.nlu.recognizer import IntentRecognizer
from edge_agent.runtime.backend import available_backends
from edge_agent.runtime.bundle import MANIFEST, default_bundle_path, load_bundle
from edge_agent.runtime.model import Model

TEXTS = (
    "turn on the kitchen lights",
    "set the bedroom lamp to fifty percent",
    "what is the weather like tomorrow",
    "start a timer for ten minutes",
    "who won the football game last night",
)
LOG_LINES = (
    "Nov 30 10:01:02 gw01 kernel: Out of memory: Killed process 812 (python3)",
    "Started Mosquitto MQTT Broker.",
)
OUT = Path(__file__).with_name("default_bundle.json")


def main() -> None:
    bundle = load_bundle(default_bundle_path())
    golden: dict = {
        "manifest_sha256": hashlib.sha256((bundle.path / MANIFEST).read_bytes()).hexdigest(),
        "backends": {},
    }
    for backend in available_backends():
        model = Model(bundle, backend=backend)
        rec = IntentRecognizer(model)
        cases = []
        for text in TEXTS:
            ids = model.tokenizer.encode(text).ids[None]
            logits, _ = model.run_intents(ids)
            result = rec.recognize([text])[0]
            cases.append(
                {
                    "text": text,
                    "ids": ids[0].tolist(),
                    "intent_logits": [round(float(x), 5) for x in logits[0]],
                    "intent": result.intent,
                }
            )
        logs = []
        for line in LOG_LINES:
            ids = model.tokenizer.encode(line).ids[None]
            sev, cat, anom = model.run_logs(ids)
            logs.append(
                {
                    "line": line,
                    "severity_logits": [round(float(x), 5) for x in sev[0]],
                    "category_logits": [round(float(x), 5) for x in cat[0]],
                    "anomaly_logit": round(float(anom[0]), 5),
                }
            )
        golden["backends"][backend] = {"intents": cases, "logs": logs}
    OUT.write_text(json.dumps(golden, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
