"""``run.py``'s lint measures for two gpustack executables, in turns run by run: CPU medians.

    GPUSTACK_JOBS=1 python benchmarks/side_by_side.py --before /path/to/old/bin/gpustack
    python benchmarks/side_by_side.py --before OLD --runs 7 --gpustack NEW

On a machine other work shares, ``run.py`` run once per executable a few minutes apart
compares two different machines: the load moves between the runs. Here each run of one is
followed at once by the same run of the other, on the same corpora, each with caches of its
own. Set ``GPUSTACK_JOBS`` (1: one process) to compare the work itself: otherwise each run
starts a worker only when a CPU is idle at that moment, and a run with a worker spends more
CPU time (forking, sending results) for less wall time, so that CPU medians jump with the
load. Prints a Markdown table: before, now, change.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from corpus import CACHE, corpus_dir
from run import FOUND_OR_CLEAN, default_gpustack, run_once
from specs import spec_file

Command = Callable[[int, str, int], list[str]]  # (which executable, executable, run) -> command


def compare(label: str, command: Command, executables: tuple[str, str], runs: int) -> None:
    """One row: ``command`` for each executable in turns, ``runs`` times."""
    seconds: tuple[list[float], list[float]] = ([], [])
    for run in range(runs):
        for which, executable in enumerate(executables):
            seconds[which].append(run_once(command(which, executable, run), FOUND_OR_CLEAN, None).cpu_seconds)
    before, now = (statistics.median(done) for done in seconds)
    print(f"| {label} | {before:.3g} | {now:.3g} | {100 * (now / before - 1):+.0f} % |", flush=True)
    print(f"  {label}: before {[round(s, 3) for s in seconds[0]]}, now {[round(s, 3) for s in seconds[1]]}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, help="the gpustack executable to compare with")
    parser.add_argument("--gpustack", default=default_gpustack(), help="this checkout's gpustack executable")
    parser.add_argument("--runs", type=int, default=7, help="runs of each executable per measure (default 7)")
    args = parser.parse_args(argv)
    executables = (args.before, args.gpustack)
    small, large = corpus_dir(2_000, 200, cache=CACHE), corpus_dir(10_000, 1_000, cache=CACHE)
    one = next(corpus_dir(5, 1, cache=CACHE).rglob("*.yaml"))
    spec = str(spec_file(50, CACHE))
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)

        def cold(path: Path, *options: str) -> Command:
            return lambda which, gpustack, run: [
                gpustack, "lint", "--cache-dir", str(scratch / f"cold-{which}-{path.name}-{len(options)}-{run}"), *options, str(path)
            ]

        def warm(which: int, gpustack: str, run: int) -> list[str]:
            return [gpustack, "lint", "--cache-dir", str(scratch / f"warm-cache-{which}"), str(scratch / f"warm-{which}")]

        def one_changed(which: int, gpustack: str, run: int) -> list[str]:
            files = sorted((scratch / f"warm-{which}").rglob("*.yaml"))
            changed = files[len(files) // 2]
            text = (large / changed.relative_to(scratch / f"warm-{which}")).read_text(encoding="utf-8")
            changed.write_text(f"{text}# edited before run {run}\n", encoding="utf-8")
            return warm(which, gpustack, run)

        def spec_seen(which: int, gpustack: str, run: int) -> list[str]:
            edited = scratch / f"seen-{which}-{one.name}"
            edited.write_text(f"{one.read_text(encoding='utf-8')}# edited before run {run}\n", encoding="utf-8")
            return [gpustack, "lint", "--cache-dir", str(scratch / f"seen-cache-{which}"), "--spec", spec, str(edited)]

        print(f"| measure | before ({args.before}) | now | change |\n|---|---|---|---|")
        compare("lint 2,000 docs, cold", cold(small), executables, args.runs)
        compare("lint 10,000 docs, cold", cold(large), executables, args.runs)
        compare("lint 10,000 docs, `--no-cache`", lambda which, gpustack, run: [gpustack, "lint", "--no-cache", str(large)],
                executables, args.runs)
        for which, gpustack in enumerate(executables):  # the warm runs' caches filled, the spec read once
            shutil.copytree(large, scratch / f"warm-{which}")
            run_once(warm(which, gpustack, 0), FOUND_OR_CLEAN, None)
            run_once(spec_seen(which, gpustack, -1), FOUND_OR_CLEAN, None)
        compare("warm, nothing changed", warm, executables, args.runs)
        compare("warm, one file changed", one_changed, executables, args.runs)
        compare("lint one small file, cold", cold(one), executables, args.runs)
        compare("10,000 docs with the 50-pool spec", cold(large, "--spec", spec), executables, args.runs)
        compare("one small file with the spec", cold(one, "--spec", spec), executables, args.runs)
        compare("the same, changed, spec read before", spec_seen, executables, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
