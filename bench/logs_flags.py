"""Share of lines flagged ``anomaly`` on routine logs: the 13 loghub systems and this machine's own.

Usage::

    .venv/bin/python bench/logs_flags.py [--data ../shared/eval/logs] [--bundle DIR] [--no-model] [--show N]
        [--loghub-only | --local-only] [--files F1,F2]

Each input is one source of one ``LogService`` (the shipped bundle unless ``--no-model``), fed in
order through ``LogService.process`` as ``edge-agent logs classify`` does, from an empty state.
Local inputs: every readable ``*.log`` under /var/log (apt's term.log and history.log, dpkg,
mosquitto, MariaDB, PostgreSQL, RabbitMQ, Redis, NATS ...) and the kernel ring buffer
(``dmesg``) when it can be read. Printed per input: lines, lines flagged, share, the first
``--show`` flagged lines; then the overall share of the local inputs. Targets (issue 17): each
loghub system <= 3 %, local inputs <= 1 % overall and <= 3 % per file.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "eval" / "logs"
LOCAL_ROOT = Path("/var/log")


def loghub_inputs(data: Path) -> list[tuple[str, list[str]]]:
    out = []
    for d in sorted(p for p in data.iterdir() if (p / f"{p.name}_2k.log").exists()):
        raw = (d / f"{d.name}_2k.log").read_bytes().decode("utf-8", "replace").splitlines()
        out.append((d.name, raw))
    return out


def local_inputs(files: list[str]) -> list[tuple[str, list[str]]]:
    paths = [Path(f) for f in files] if files else sorted(LOCAL_ROOT.rglob("*.log"))
    out = []
    for path in paths:
        try:
            text = path.read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if lines:
            out.append((str(path), lines))
    if not files:
        try:
            dmesg = subprocess.run(["dmesg"], capture_output=True, text=True, check=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            dmesg = ""
        if dmesg.strip():
            out.append(("dmesg", [ln for ln in dmesg.splitlines() if ln.strip()]))
    return out


def load_model(no_model: bool, bundle: Path | None = None) -> object | None:
    """The log heads of ``bundle`` (default: the shipped bundle), or None for the keyword rules."""
    if no_model:
        return None
    from edge_agent.runtime.bundle import default_bundle_path, load_bundle
    from edge_agent.runtime.model import Model

    path = bundle if bundle is not None else default_bundle_path()
    if bundle is not None and not (bundle / "manifest.json").is_file():
        raise SystemExit(f"--bundle {bundle}: no manifest.json there")
    if not (Path(path) / "manifest.json").exists():
        print("no bundle installed: keyword rules label the lines")
        return None
    return Model(load_bundle(path), tasks=("logs",))


def flag_share(name: str, lines: list[str], model: object | None, show: int) -> tuple[int, int]:
    """(lines, flagged) of one input, printed with the first ``show`` flagged lines."""
    from edge_agent.logs.service import LogService

    service = LogService(model=model)  # type: ignore[arg-type]
    flagged = []
    for start in range(0, len(lines), 256):
        for res in service.process(lines[start : start + 256], source=Path(name).name):
            if res.label.anomaly:
                flagged.append(res)
    share = len(flagged) / len(lines) if lines else 0.0
    print(f"{name:<44} {len(lines):>6} {len(flagged):>6} {100 * share:6.2f} %")
    for res in flagged[:show]:
        print(f"    {res.label.severity:<8} {res.label.score:.2f} {res.parsed.text[:150]}")
    return len(lines), len(flagged)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--no-model", action="store_true")
    ap.add_argument("--bundle", type=Path, help="bundle directory (default: the shipped one)")
    ap.add_argument("--show", type=int, default=0, help="flagged lines printed per input")
    ap.add_argument("--loghub-only", action="store_true")
    ap.add_argument("--local-only", action="store_true")
    ap.add_argument("--files", default="", help="comma-separated local files instead of /var/log")
    args = ap.parse_args()
    model = load_model(args.no_model, args.bundle)
    print(f"{'input':<44} {'lines':>6} {'flagged':>6} {'share':>8}")
    if not args.local_only:
        worst = 0.0
        for name, lines in loghub_inputs(args.data):
            n, f = flag_share(name, lines, model, args.show)
            worst = max(worst, f / n)
        print(f"{'loghub worst':<44} {'':>6} {'':>6} {100 * worst:6.2f} %")
    if not args.loghub_only:
        total = flagged = 0
        worst = 0.0
        for name, lines in local_inputs([f for f in args.files.split(",") if f]):
            n, f = flag_share(name, lines, model, args.show)
            total, flagged, worst = total + n, flagged + f, max(worst, f / n)
        if total:
            print(f"{'local overall':<44} {total:>6} {flagged:>6} {100 * flagged / total:6.2f} %")
            print(f"{'local worst file':<44} {'':>6} {'':>6} {100 * worst:6.2f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
