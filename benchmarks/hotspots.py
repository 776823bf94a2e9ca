"""Where the time of ``gpustack lint`` goes, for the figures ``run.py`` prints.

    python benchmarks/hotspots.py             # top 15 of each
    python benchmarks/hotspots.py --top 30

Imports: ``python -X importtime`` of a one-file lint, where start-up is most of the cost:
the top-level imports by cumulative time (what the command pulls in), then the modules by
their own time. Functions: cProfile of a whole lint process over the 10,000-document
corpus, by own time and (linter and YAML only) by cumulative time. Floor: the CPU time of
libyaml's event stream alone over the 2,000-document corpus (PyYAML's C binding, every event
pulled, nothing built), which any linter reading YAML through PyYAML pays before it builds an
object; the speed-up over checkov cannot pass checkov's time over this plus start-up.
"""

from __future__ import annotations

import argparse
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import corpus_dir

LINT = ("-m", "gpustack", "lint")


def lint(*python_options: str, target: Path) -> str:
    """Run lint under this interpreter with ``python_options``; its stderr (exit 1 is findings)."""
    done = subprocess.run(
        [sys.executable, *python_options, *LINT, str(target)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    if done.returncode not in (0, 1):
        sys.exit(f"gpustack lint {target} exited {done.returncode}:\n{done.stderr}")
    return done.stderr


def import_times(path: Path, top: int) -> None:
    rows: list[tuple[int, int, str]] = []  # self µs, cumulative µs, module with its nesting indent
    for line in lint("-X", "importtime", target=path).splitlines():
        if line.startswith("import time:") and "imported package" not in line:
            own, cumulative, module = line.removeprefix("import time:").split("|")
            rows.append((int(own), int(cumulative), module.rstrip()))
    outermost = [row for row in rows if not row[2].startswith("  ")]
    total = sum(cumulative for _, cumulative, _ in outermost)
    print(f"## Imports of `gpustack lint {path.name}`: {total / 1000:.0f} ms in {len(rows)} modules\n")
    print(f"Top-level imports by cumulative time:\n{'ms':>8}  module")
    for _, cumulative, module in sorted(outermost, reverse=True, key=lambda row: row[1])[:top]:
        print(f"{cumulative / 1000:8.1f} {module}")
    print(f"\nModules by own time:\n{'ms':>8}  module")
    for own, _, module in sorted(rows, reverse=True)[:top]:
        print(f"{own / 1000:8.1f}  {module.strip()}")


def profile(folder: Path, top: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        stats_file = Path(scratch) / "lint.prof"
        start = time.perf_counter()
        lint("-m", "cProfile", "-o", str(stats_file), target=folder)
        wall = time.perf_counter() - start
        print(f"\n## cProfile of `gpustack lint` over {folder.name}: {wall:.2f} s wall under the profiler\n")
        stats = pstats.Stats(str(stats_file), stream=sys.stdout)
        print("By own time:")
        stats.sort_stats("tottime").print_stats(top)
        # By cumulative time the CLI's wrappers would fill the list: keep the linter and YAML.
        print("By cumulative time, gpustack.lint and YAML only:")
        stats.sort_stats("cumulative").print_stats(r"/gpustack/lint/|/yaml/|/ruamel/", top)


def event_floor(folder: Path, runs: int = 5) -> None:
    import yaml

    texts = [path.read_bytes() for path in sorted(folder.rglob("*.yaml"))]
    timings = []
    for _ in range(runs):
        start = time.process_time()
        for text in texts:
            parser = yaml.CSafeLoader(text)
            while parser.get_event() is not None:
                pass
            parser.dispose()
        timings.append(time.process_time() - start)
    timings.sort()
    print(f"\n## Floor: libyaml's event stream alone over {folder.name}, one process")
    print(f"CPU {timings[len(timings) // 2]:.3f} s (median of {runs}; fastest {timings[0]:.3f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=15, help="rows per list (default 15)")
    args = parser.parse_args()
    import_times(next(corpus_dir(5, 1).rglob("*.yaml")), args.top)
    profile(corpus_dir(10_000, 1_000), args.top)
    event_floor(corpus_dir(2_000, 200))


if __name__ == "__main__":
    main()
