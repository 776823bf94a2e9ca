"""``benchmarks/run.py --quick`` end to end on a tiny corpus: every figure is printed.

A smoke test of the script, not of speed: no timing is asserted.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

RUN = Path(__file__).resolve().parents[2] / "benchmarks" / "run.py"


def test_quick_run_prints_every_figure(tmp_path: Path) -> None:
    # A stand-in for checkov (the real one takes seconds): the comparison's rows all the same.
    checkov = tmp_path / "checkov"
    checkov.write_text('#!/bin/sh\n[ "$1" = --version ] && echo 3.0.0\nexit 0\n')
    checkov.chmod(0o755)
    env = os.environ | {"PATH": os.pathsep.join([str(Path(sys.executable).parent), os.defpath])}
    done = subprocess.run(
        [sys.executable, str(RUN), "--quick", "--cache", str(tmp_path), "--checkov", str(checkov)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for measure in (
        "| Lint 200 docs / 20 files",
        "| Lint 1,000 docs / 100 files",
        "| Peak RSS, lint 1,000 docs",
        "| Scaling: time 1,000 / 200 docs",
        "| Lint one small file (5 docs), cold |",
        "| Lint 1,000 docs / 100 files, --no-cache |",
        "| Lint 1,000 docs / 100 files, warm: nothing changed |",
        "| Lint 1,000 docs / 100 files, warm: one file changed |",
        "| Lint 1,000 docs / 100 files with the 50-pool spec as context, cold |",
        "| Lint one small file with the 50-pool spec, cold |",
        "| Lint one small file with the 50-pool spec, changed, spec read before |",
        "| Lint 200 docs / 20 files, cold, beside checkov |",
        "| checkov 200 docs / 20 files |",
        "| Speed-up over checkov, 200 docs / 20 files |",
        "| Render examples/k3s-l4.yaml (cold) |",
        "| Render generated spec, 50 node pools (cold) |",
    ):
        assert measure in done.stdout, measure
