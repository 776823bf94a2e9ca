"""Make the benchmark scripts (benchmarks/*.py, run as scripts, not a package) importable."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
