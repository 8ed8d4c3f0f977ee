"""``edge-fw calibrate-custom``: a bundle's custom-intent settings chosen again, on the real
shipped model (its int8 sentence embedding and word pieces), from SGD-shaped rows written here."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from edge_agent.nlu.custom import CustomSettings
from edge_agent.runtime.bundle import MANIFEST, default_bundle_path, load_bundle
from edge_agent.runtime.signing import SIGNATURE_FILE

ROOT = Path(__file__).resolve().parent.parent
ASKS = {  # (service, intent) -> phrasings
    ("Banks_1", "CheckBalance"): ["what is my {} account balance", "how much money is in my {} account"],
    ("Banks_1", "TransferMoney"): ["send money from my {} account", "move cash out of {} savings"],
    ("Flights_1", "SearchOnewayFlight"): ["find a one way flight to {}", "i need a plane ticket to {}"],
    ("Hotels_1", "ReserveHotel"): ["book a hotel room in {}", "reserve me a hotel in {}"],
    ("RideSharing_1", "GetRide"): ["get me a cab to {}", "i need a ride to {}"],
}
PLACES = ["paris", "tokyo", "lima", "oslo", "cairo", "perth", "quito", "rome", "seoul", "dakar", "bern"]


def edge_fw(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-c", "import sys; from firmware_tools.cli import main; sys.exit(main())", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)


def _data_dir(tmp: Path) -> Path:
    rows = [
        {"text": phrase.format(place), "service": service, "intent": intent, "spans": []}
        for (service, intent), phrases in ASKS.items()
        for phrase in phrases
        for place in PLACES
    ]
    (tmp / "data" / "sgd").mkdir(parents=True)
    (tmp / "data" / "sgd" / "dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp / "data"


def test_calibrate_custom_rewrites_the_settings_of_every_variant(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(default_bundle_path(), bundle)
    before = json.loads((bundle / MANIFEST).read_text())
    proc = edge_fw("calibrate-custom", str(bundle), "--data-dir", str(_data_dir(tmp_path)), "--seed", "1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    after = load_bundle(bundle).manifest  # still a valid bundle (files unchanged, manifest rewritten)
    cal = after["calibration"]["custom_intents"]
    assert "calibration.custom_intents: " in proc.stdout and f'"threshold": {cal["threshold"]}' in proc.stdout
    assert cal != before["calibration"]["custom_intents"] and "lexical_weight" in cal
    assert after["metrics"]["student_int8"]["custom_queries"] > 0
    small = after["variants"]["small"]["calibration"]["custom_intents"]
    assert small != before["variants"]["small"]["calibration"]["custom_intents"]
    settings = CustomSettings.from_calibration(after["calibration"])
    assert (settings.threshold, settings.lexical_weight) == (cal["threshold"], cal["lexical_weight"])
    # everything else of the manifest stays as it was
    assert {k: v for k, v in after.items() if k not in ("calibration", "metrics", "variants")} == {
        k: v for k, v in before.items() if k not in ("calibration", "metrics", "variants")
    }


def test_calibrate_custom_refuses_without_sgd_or_on_a_signed_bundle(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(default_bundle_path(), bundle)
    before = (bundle / MANIFEST).read_bytes()
    proc = edge_fw("calibrate-custom", str(bundle), "--data-dir", str(tmp_path / "nothing"))
    assert proc.returncode == 2 and "sgd/dev.jsonl not found" in proc.stderr
    (bundle / SIGNATURE_FILE).write_text("{}")
    proc = edge_fw("calibrate-custom", str(bundle), "--data-dir", str(_data_dir(tmp_path)))
    assert proc.returncode == 2 and "is signed" in proc.stderr
    assert (bundle / MANIFEST).read_bytes() == before
