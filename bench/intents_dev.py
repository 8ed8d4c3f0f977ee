"""Intent + slot accuracy on Home Assistant's English test sentences, and out-of-scope rejection.

Usage::

    python bench/intents_dev.py                      # the real recognizer via `edge-agent intents`
    python bench/intents_dev.py --bundle DIR         # ... with a given bundle
    python bench/intents_dev.py --bundle A --against B   # ... and A against B, per request
    python bench/intents_dev.py --slot-rules minimal # the model's own slots, without span repair
    python bench/intents_dev.py --proxy 60000        # a stand-in model trained on generated data
                                                     # (judges the generator; needs TensorFlow)

Inputs: ``../shared/eval/intents/ha_tests_en.jsonl`` (dev set; the home is converted from
``ha_tests_en_fixtures.yaml`` into our home YAML in a temp dir), ``tests/data/oos_dev.txt``
(out-of-scope requests, never trained on), ``tests/data/inscope_dev.jsonl`` (natural
paraphrases with intents and slots) and three later, intent-only probes written without looking at
the generator, against the example home: ``tests/data/probe_dev.jsonl``,
``tests/data/probe2_dev.jsonl`` and ``tests/data/probe3_dev.jsonl`` (docs/model.md says which
of them have steered data or a ship decision).

Metrics (docs/intents.md, "Measuring"):
- intent accuracy: predicted intent == expected intent. Records whose expected intent is not in
  our inventory (HA's HassRespond) expect ``null``.
- slot accuracy: over every expected slot of every record, the prediction has that slot with an
  equal value: numbers compared numerically, everything else as case-insensitive strings.
  Extra predicted slots are not penalized.
- OOS rejection: share of ``oos_dev.txt`` lines answered with intent ``null``.
- probes: in-scope intent accuracy and out-of-scope rejection over each probe file.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._cli import oos_dev_lines, paired_line, run_lines  # noqa: E402
from edge_agent.nlu.home import Home  # noqa: E402
from edge_agent.nlu.schema import INTENTS  # noqa: E402

DEV = ROOT.parent / "shared" / "eval" / "intents" / "ha_tests_en.jsonl"
FIXTURES = DEV.with_name("ha_tests_en_fixtures.yaml")
INSCOPE = ROOT / "tests" / "data" / "inscope_dev.jsonl"
PROBES = [
    ROOT / "tests" / "data" / name for name in ("probe_dev.jsonl", "probe2_dev.jsonl", "probe3_dev.jsonl")
]


def fixtures_to_home(fixtures: dict[str, Any]) -> dict[str, Any]:
    """HA test fixtures -> our home YAML dict (areas, floors, entities, lists)."""
    floors = [f["name"] for f in fixtures.get("floors") or []]
    area_names = {a["id"]: a["name"] for a in fixtures.get("areas") or []}
    entities: list[dict[str, Any]] = []
    lists: list[str] = []
    for ent in fixtures.get("entities") or []:
        domain = str(ent["id"]).split(".", 1)[0]
        if domain == "todo":
            lists.append(re.sub(r"\[[^\]]*\]", "", str(ent["name"])))
            continue
        name = re.sub(r"\[[^\]]*\]", "", str(ent["name"]))  # HA template optionals: "Trader Joe[']s"
        item: dict[str, Any] = {"name": name, "domain": domain}
        if ent.get("area") in area_names:
            item["area"] = area_names[ent["area"]]
        dc = (ent.get("attributes") or {}).get("device_class")
        if dc:
            item["device_class"] = str(dc)
        if ent.get("aliases"):
            item["aliases"] = list(ent["aliases"])
        entities.append(item)
    return {"areas": list(area_names.values()), "floors": floors, "entities": entities, "lists": lists}


def _equal(expected: Any, got: Any) -> bool:
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        try:
            return abs(float(got) - float(expected)) < 1e-6
        except (TypeError, ValueError):
            return False
    return str(expected).strip().lower() == str(got).strip().lower()


def _slot_ok(slots: dict[str, Any], name: str, expected: Any) -> bool:
    """Whether a result's ``slots`` give slot ``name`` the expected value."""
    return name in slots and _equal(expected, slots[name]["value"])


def _miss_cause(got: str | None, expected: str | None) -> str:
    """Why a request's expected slot was missed (``Score.slot_causes``)."""
    if got is None:
        return "rejected"
    return "right intent" if got == expected else "other intent"


class Score:
    def __init__(self) -> None:
        self.n = 0
        self.intent_ok = 0
        self.slots = 0
        self.slots_ok = 0
        self.confusion: collections.Counter[tuple[str, str]] = collections.Counter()
        self.slot_errors: collections.Counter[str] = collections.Counter()
        # why an expected slot was missed: the request rejected, given another intent, or given
        # its intent with the slot's value wrong or missing
        self.slot_causes: collections.Counter[str] = collections.Counter()
        self.examples: dict[tuple[str, str], str] = {}
        self.slot_examples: dict[str, str] = {}

    def add(
        self, text: str, expected_intent: str | None, expected_slots: dict[str, Any], result: dict[str, Any]
    ) -> None:
        self.n += 1
        got = result.get("intent")
        if got == expected_intent:
            self.intent_ok += 1
        else:
            key = (str(expected_intent), str(got))
            self.confusion[key] += 1
            self.examples.setdefault(key, text)
        slots = result.get("slots") or {}
        for name, value in expected_slots.items():
            self.slots += 1
            if _slot_ok(slots, name, value):
                self.slots_ok += 1
            else:
                key2 = f"{expected_intent}.{name}"
                self.slot_errors[key2] += 1
                cause = _miss_cause(got, expected_intent)
                self.slot_causes[cause] += 1
                gotv = slots[name]["value"] if name in slots else None
                self.slot_examples.setdefault(key2, f"{text!r}: expected {value!r}, got {gotv!r}")

    def report(self, title: str, top: int = 15) -> None:
        ia = 100.0 * self.intent_ok / max(1, self.n)
        sa = 100.0 * self.slots_ok / max(1, self.slots)
        print(f"== {title}: {self.n} sentences")
        print(f"intent accuracy {ia:.2f}%  ({self.intent_ok}/{self.n})")
        if self.slots:
            print(f"slot accuracy   {sa:.2f}%  ({self.slots_ok}/{self.slots} expected slots)")
            c = self.slot_causes
            print(
                f"slots missed    {self.slots - self.slots_ok}: {c['rejected']} of rejected requests, "
                f"{c['other intent']} of requests given another intent, {c['right intent']} with the "
                "right intent"
            )
        for (exp, got), count in self.confusion.most_common(top):
            print(f"  intent {exp} -> {got}: {count}   e.g. {self.examples[(exp, got)]!r}")
        for key, count in self.slot_errors.most_common(top):
            print(f"  slot {key}: {count}   e.g. {self.slot_examples[key]}")


# ------------------------------------------------------------------------------ recognizers
def run_cli(
    items: Sequence[tuple[str, str | None]], home_path: Path, bundle: str | None, slot_rules: str = "full"
) -> list[dict[str, Any]]:
    """Send (text, context area) lines through `edge-agent intents`; one JSON result per line."""
    lines = []
    for text, area in items:
        lines.append(
            json.dumps({"text": text, "context": {"area": area}}) if area else text.replace("\n", " ")
        )
    return run_lines(["intents", "--home", str(home_path), "--slot-rules", slot_rules], lines, bundle)


class ProxyRunner:
    def __init__(self, n: int, seed: int, epochs: int, weights: Path | None) -> None:
        from bench.intent_proxy import ProxyRecognizer
        from firmware_tools.data.intents import generate

        self.model = ProxyRecognizer(epochs=epochs, seed=seed)
        if weights is not None and weights.exists():
            self.model.load(str(weights))
            return
        self.model.fit(generate(seed, n))
        if weights is not None:
            self.model.save(str(weights))

    def __call__(self, items: Sequence[tuple[str, str | None]], home: Home | None) -> list[dict[str, Any]]:
        results = self.model.recognize([t for t, _ in items], home, [a for _, a in items])
        return [r.to_dict() for r in results]


# ------------------------------------------------------------------------------ main
def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", help="bundle directory for edge-agent intents")
    ap.add_argument(
        "--proxy", type=int, default=0, metavar="N", help="train a stand-in model on N generated examples"
    )
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument(
        "--proxy-weights", type=Path, help="reuse (or save) the stand-in model's weights (*.weights.h5)"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--top", type=int, default=15, help="how many top errors to list")
    ap.add_argument(
        "--against", metavar="DIR", help="also run bundle DIR and compare the two per request (paired)"
    )
    ap.add_argument("--dump", type=Path, help="write every dev record with its prediction (JSON lines) here")
    ap.add_argument(
        "--slot-rules",
        choices=("full", "minimal"),
        default="full",
        help="minimal: the model's own slots, normalized, without span repair (as edge-agent intents)",
    )
    args = ap.parse_args(argv)

    dev = _jsonl(DEV)
    home_dict = fixtures_to_home(yaml.safe_load(FIXTURES.read_text(encoding="utf-8")))
    home = Home.from_dict(home_dict)
    oos = oos_dev_lines()
    inscope = _jsonl(INSCOPE)
    probes = {path.name: _jsonl(path) for path in PROBES}

    dev_items = [(r["text"], (r.get("context") or {}).get("area")) for r in dev]
    ins_items = [(r["text"], r.get("context_area")) for r in inscope]
    oos_items = [(t, None) for t in oos]
    probe_items = {name: [(r["text"], None) for r in recs] for name, recs in probes.items()}
    items = {"dev": dev_items, "inscope": ins_items, "oos": oos_items, **probe_items}
    if args.proxy:
        runner = ProxyRunner(args.proxy, args.seed, args.epochs, args.proxy_weights)
        ins_home_obj = Home.from_dict(_inscope_home())
        outs = {k: runner(v, home if k in ("dev", "oos") else ins_home_obj) for k, v in items.items()}
    else:
        outs = run_cli_sets(items, home_dict, args.bundle, args.slot_rules)
    dev_out, ins_out, oos_out = outs["dev"], outs["inscope"], outs["oos"]
    probe_out = {name: outs[name] for name in probe_items}

    if args.dump:
        with args.dump.open("w", encoding="utf-8") as fh:
            for rec, res in zip(dev, dev_out, strict=True):
                fh.write(json.dumps({"expected": rec, "got": res}) + "\n")
    score = Score()
    for rec, res in zip(dev, dev_out, strict=True):
        expected = rec["intent"] if rec["intent"] in INTENTS else None
        score.add(rec["text"], expected, rec["slots"] if expected else {}, res)
    score.report("HA dev set (ha_tests_en.jsonl)", args.top)

    ins = Score()
    for rec, res in zip(inscope, ins_out, strict=True):
        ins.add(rec["text"], rec["intent"], rec.get("slots") or {}, res)
    ins.report("natural in-scope paraphrases (tests/data/inscope_dev.jsonl)", args.top)

    rejected = sum(1 for r in oos_out if r.get("intent") is None)
    share = 100.0 * rejected / max(1, len(oos_out))
    print(f"== out-of-scope rejection: {share:.2f}%  ({rejected}/{len(oos_out)})")
    leaks = collections.Counter(r["intent"] for r in oos_out if r.get("intent") is not None)
    for (text, _), r in zip(oos_items, oos_out, strict=True):
        if r.get("intent") is not None and leaks[r["intent"]] > 0:
            print(f"  accepted as {r['intent']}: {text!r}")
            leaks[r["intent"]] -= 1 if leaks[r["intent"]] > 0 else 0
    for name, recs in probes.items():
        report_probe(name, recs, probe_out[name])
    if args.against:
        other = run_cli_sets(items, home_dict, args.against, args.slot_rules)
        expected = {
            "dev": [r["intent"] if r["intent"] in INTENTS else None for r in dev],
            "inscope": [r["intent"] for r in inscope],
            "oos": [None] * len(oos_items),
            **{name: [r["intent"] for r in recs] for name, recs in probes.items()},
        }
        report_paired(expected, outs, other, args.bundle or "the shipped bundle", args.against)
        report_paired_slots(dev, dev_out, other["dev"])
    return 0


def slot_rights(dev: Sequence[dict[str, Any]], out: Sequence[dict[str, Any]]) -> list[bool]:
    """Per expected slot of the in-scope dev records, in order: whether ``out`` gives its value
    (as ``Score`` counts it: a rejected or misrecognized request gets its slots wrong)."""
    rights = []
    for rec, res in zip(dev, out, strict=True):
        if rec["intent"] not in INTENTS:
            continue
        slots = res.get("slots") or {}
        for name, value in rec["slots"].items():
            rights.append(_slot_ok(slots, name, value))
    return rights


def report_paired_slots(
    dev: Sequence[dict[str, Any]], a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]]
) -> None:
    """The HA dev set's slots paired per expected slot between bundle a and bundle b."""
    print(f"  {paired_line('dev, slots per expected slot', slot_rights(dev, a), slot_rights(dev, b))}")


def run_cli_sets(
    items: dict[str, list[tuple[str, str | None]]],
    home_dict: dict[str, Any],
    bundle: str | None,
    slot_rules: str = "full",
) -> dict[str, list[dict[str, Any]]]:
    """Every set through `edge-agent intents`: the dev set and out-of-scope lines against the HA
    fixtures' home, paraphrases and probes against the example home."""
    with tempfile.TemporaryDirectory() as tmp:
        ha_home, ins_home = Path(tmp) / "home.yaml", Path(tmp) / "inscope_home.yaml"
        ha_home.write_text(yaml.safe_dump(home_dict, sort_keys=False), encoding="utf-8")
        ins_home.write_text(yaml.safe_dump(_inscope_home(), sort_keys=False), encoding="utf-8")
        return {
            k: run_cli(v, ha_home if k in ("dev", "oos") else ins_home, bundle, slot_rules)
            for k, v in items.items()
        }


# sets that steered data or took part in a ship rule before probe 3 was written
EARLIER_SETS = ("dev", "inscope", "oos", "probe_dev.jsonl", "probe2_dev.jsonl")


def report_paired(
    expected: dict[str, list[str | None]],
    a: dict[str, list[dict[str, Any]]],
    b: dict[str, list[dict[str, Any]]],
    a_name: str,
    b_name: str,
) -> None:
    """Per request, right or wrong under bundle a and under bundle b (intent only; out of scope is
    right when rejected); how many only a gets right, how many only b, exact two-sided McNemar p."""

    def right(run: dict[str, list[dict[str, Any]]], key: str, scope: bool) -> list[bool]:
        return [
            res.get("intent") == exp
            for exp, res in zip(expected[key], run[key], strict=True)
            if (exp is not None) == scope
        ]

    print(f"== paired, per request: a = {a_name}, b = {b_name}")
    groups = [([k], k) for k in expected] + [
        (list(EARLIER_SETS), "pooled over dev, paraphrases, oos_dev, probes 1-2")
    ]
    for keys, label in groups:
        for scope, what in ((True, "in scope"), (False, "out of scope")):
            ra = [x for k in keys for x in right(a, k, scope)]
            rb = [x for k in keys for x in right(b, k, scope)]
            if ra:
                print(f"  {paired_line(f'{label}, {what}', ra, rb)}")


def report_probe(name: str, probe: list[dict[str, Any]], out: list[dict[str, Any]]) -> None:
    pairs = list(zip(probe, out, strict=True))
    ins = [(rec, res) for rec, res in pairs if rec["intent"] is not None]
    oos = [(rec, res) for rec, res in pairs if rec["intent"] is None]
    right = sum(1 for rec, res in ins if res.get("intent") == rec["intent"])
    rejected = sum(1 for _, res in oos if res.get("intent") is None)
    print(
        f"== probe (tests/data/{name}): in-scope intent {100.0 * right / max(1, len(ins)):.2f}% "
        f"({right}/{len(ins)}), out-of-scope rejected {100.0 * rejected / max(1, len(oos)):.2f}% "
        f"({rejected}/{len(oos)})"
    )
    for rec, res in pairs:
        if res.get("intent") != rec["intent"]:
            print(f"  {rec['text']!r}: expected {rec['intent']}, got {res.get('intent')}")


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _inscope_home() -> dict[str, Any]:
    path = ROOT / "tests" / "data" / "home_example.yaml"
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data


if __name__ == "__main__":
    raise SystemExit(main())
