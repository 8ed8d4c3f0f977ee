"""Peak RSS of ``edge-agent intents`` streaming a large bundle with default settings.

    edge-fw synth-bundle --params 100M --out /tmp/edge-agent-bench/synth-100M   # once, ~100 MB
    nice .venv/bin/python bench/intents_rss.py --bundle /tmp/edge-agent-bench/synth-100M

Runs ``edge-agent intents --bundle B --residency stream --weight-budget-mb 16`` (no other flag)
as a child process over ``--lines`` transcripts and reads its peak RSS from ``wait4`` (the
kernel's ``ru_maxrss``, KiB / 1024). The child's cache directory is a fresh temporary one
(``XDG_CACHE_HOME``; ``CACHE_DIRECTORY`` unset), so the first run writes the XNNPACK weight
cache and later runs map it. Printed: the first run, ``--runs`` later runs, and the same command
with ``--xnnpack-weight-cache off`` for comparison; target: every default run <= 64 MB.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_BUNDLE = Path("/tmp/edge-agent-bench/synth-100M")
TARGET_MB = 64.0
_TRANSCRIPTS = (
    "turn on the kitchen lights",
    "what is the temperature in the bedroom",
    "set the living room lamp to fifty percent",
    "add milk to my shopping list",
)


def run_once(bundle: Path, cache_home: Path, lines: int, extra: list[str]) -> tuple[float, float]:
    """(peak RSS in MB, wall seconds) of one ``edge-agent intents`` process."""
    cmd = [sys.executable, "-m", "edge_agent", "intents", "--bundle", str(bundle),
           "--residency", "stream", "--weight-budget-mb", "16", *extra]
    env = {k: v for k, v in os.environ.items() if k != "CACHE_DIRECTORY"}
    env.update(XDG_CACHE_HOME=str(cache_home), PYTHONPATH=str(REPO))
    text = "".join(_TRANSCRIPTS[i % len(_TRANSCRIPTS)] + "\n" for i in range(lines))
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as out, \
            tempfile.TemporaryFile() as err:
        stdin.write(text.encode())
        stdin.seek(0)
        proc = subprocess.Popen(cmd, stdin=stdin, stdout=out, stderr=err, env=env, cwd=REPO)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err.read().decode()[-2000:]}")
        out.seek(0)
        answered = sum(1 for line in out if line.strip())
    if answered != lines:
        raise SystemExit(f"edge-agent intents answered {answered} of {lines} lines")
    return usage.ru_maxrss / 1024, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", type=Path, default=DEFAULT_BUNDLE)
    ap.add_argument("--runs", type=int, default=3, help="runs after the first (cache files written)")
    ap.add_argument("--lines", type=int, default=20, help="transcripts per run")
    args = ap.parse_args()
    if not (args.bundle / "manifest.json").exists():
        hint = "make one with `edge-fw synth-bundle --params 100M --out DIR`"
        raise SystemExit(f"{args.bundle}: no bundle; {hint}")
    with tempfile.TemporaryDirectory(prefix="edge-agent-rss-") as tmp:
        cache = Path(tmp)
        rows = [("default, first run (writes the cache)", *run_once(args.bundle, cache, args.lines, []))]
        files = sorted((cache / "edge-agent" / "xnnpack").glob("*.xnn"))
        cache_mb = sum(f.stat().st_size for f in files) / 1e6
        rows += [(f"default, run {i + 2} (maps the cache)", *run_once(args.bundle, cache, args.lines, []))
                 for i in range(args.runs)]
        off = run_once(args.bundle, cache, args.lines, ["--xnnpack-weight-cache", "off"])
        rows.append(("--xnnpack-weight-cache off", *off))
    print(f"edge-agent intents --bundle {args.bundle} --residency stream --weight-budget-mb 16 "
          f"({args.lines} transcripts; cache files written by the first run: {len(files)}, "
          f"{cache_mb:.1f} MB)")
    print(f"{'run':<42} {'peak RSS':>10} {'wall':>8}")
    for name, rss, wall in rows:
        print(f"{name:<42} {rss:>7.1f} MB {wall:>6.2f} s")
    worst = max(rss for name, rss, _ in rows if name.startswith("default"))
    print(f"worst default run: {worst:.1f} MB (target <= {TARGET_MB:.0f} MB): "
          f"{'met' if worst <= TARGET_MB else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
