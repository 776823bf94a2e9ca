"""Benchmark ``gpustack lint`` and ``gpustack render`` as whole processes, beside checkov.

    python benchmarks/run.py                  # the full run: median of 5 runs per figure
    python benchmarks/run.py --checkov PATH   # compare with a checkov that is not on PATH
    python benchmarks/run.py --quick          # smoke run: smaller corpora, one run each

Each figure is the wall time of a fresh process (start-up and imports included, as in a
pre-commit hook), measured from fork to exit, with its CPU time (user + system) beside it:
cold runs start with an empty lint cache each, warm runs with the cache the run before left;
on a busy machine the wall time grows, the CPU time much less. Peak memory is the child's
maximum resident set size. Lint runs over the seeded corpus of ``corpus.py`` (generated once
into ``benchmarks/.corpus/``); render runs cold, into a new output folder each time, on every
``examples/*.yaml`` and on the 50-pool spec of ``specs.py``.

Prints a Markdown table with the targets beside the figures. Targets are
reported, never asserted; the exit status is 1 only when a measured command itself failed.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from corpus import CACHE, corpus_dir
from specs import spec_file

REPO = Path(__file__).resolve().parents[1]
MB = 1_000_000


@dataclass(frozen=True)
class Corpus:
    docs: int
    files: int
    wall_target: float | None = None  # seconds, the target for this size

    def __str__(self) -> str:
        return f"{self.docs:,} docs / {self.files:,} files"


# (small, large, one file): the large corpus has 5× the documents, for the scaling ratio.
FULL = (Corpus(2_000, 200), Corpus(10_000, 1_000, wall_target=2.0), Corpus(5, 1, wall_target=0.25))
QUICK = (Corpus(200, 20), Corpus(1_000, 100), Corpus(5, 1, wall_target=0.25))

RENDER_TARGET = 3.0  # seconds, for each example
WARM_TARGET = 0.5  # seconds, the large corpus linted again with nothing changed
ONE_CHANGED_TARGET = 0.7  # seconds, the large corpus linted again with one file changed

# Exit status 1 means findings, for gpustack and checkov alike.
FOUND_OR_CLEAN = (0, 1)
# --skip-download: no calls to the Prisma Cloud API (guideline links only), which fail offline.
CHECKOV_FLAGS = ("--framework", "kubernetes", "--quiet", "--compact", "--skip-download")


@dataclass(frozen=True)
class Run:
    seconds: float  # wall time
    cpu_seconds: float  # user + system time: what a busy shared machine disturbs least
    peak_rss: int  # bytes


@dataclass(frozen=True)
class Sample:
    seconds: float  # median wall time of the runs
    cpu_seconds: float  # median CPU time of the runs
    peak_rss: int  # bytes, the highest of the runs


class CommandFailed(Exception):
    def __init__(self, command: list[str], status: int, stderr: str) -> None:
        super().__init__(f"`{' '.join(command)}` exited {status}: {stderr.strip()[-800:]}")


def child_env(env: dict[str, str] | None) -> dict[str, str]:
    """Bytecode cached as in an installed package: PYTHONDONTWRITEBYTECODE (set in some
    sandboxes) would make every run compile the package's modules again (60 ms of a
    one-file lint); the cache goes under PYTHONPYCACHEPREFIX, out of the source tree."""
    env = dict(os.environ if env is None else env)
    if env.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        env.setdefault("PYTHONPYCACHEPREFIX", str(CACHE / "pycache"))
    return env


def run_once(command: list[str], ok: Collection[int], env: dict[str, str] | None) -> Run:
    """One run; ``os.wait4`` gives this child's own resource usage."""
    with tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=child_env(env))
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode not in ok:
            stderr.seek(0)
            raise CommandFailed(command, process.returncode, stderr.read().decode(errors="replace"))
    return Run(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024)  # Linux: KiB


def measure(
    label: str,
    command: Callable[[int], list[str]],
    runs: int,
    ok: Collection[int] = (0,),
    env: dict[str, str] | None = None,
) -> Sample:
    """Median of ``runs`` runs of ``command(run_index)``, reporting progress on stderr."""
    done: list[Run] = []
    for index in range(runs):
        done.append(run_once(command(index), ok, env))
        _progress(label, done[-1], index, runs)
    return _sample(done)


def _progress(label: str, run: Run, index: int, runs: int) -> None:
    print(f"  {label}: {run.seconds:.3f} s, CPU {run.cpu_seconds:.3f} s ({index + 1}/{runs})", file=sys.stderr)


def _sample(done: list[Run]) -> Sample:
    return Sample(
        statistics.median(run.seconds for run in done),
        statistics.median(run.cpu_seconds for run in done),
        max(run.peak_rss for run in done),
    )


@dataclass(frozen=True)
class Row:
    measure: str
    result: str
    target: str = "—"
    met: bool | None = None

    def markdown(self) -> str:
        met = {None: "", True: "yes", False: "**no**"}[self.met]
        return f"| {self.measure} | {self.result} | {self.target} | {met} |"


class Bench:
    """Collects rows; a failing command becomes a row that says so, and the run goes on."""

    def __init__(self, runs: int) -> None:
        self.runs = runs
        self.rows: list[Row] = []
        self.failures: list[str] = []

    def sample(
        self,
        label: str,
        command: Callable[[int], list[str]],
        ok: Collection[int] = (0,),
        env: dict[str, str] | None = None,
    ) -> Sample | None:
        try:
            return measure(label, command, self.runs, ok, env)
        except (CommandFailed, OSError) as exc:
            self.failures.append(f"{label}: {exc}")
            self.rows.append(Row(label, "failed (see below)"))
            return None

    def sample_pair(
        self,
        first: tuple[str, Callable[[int], list[str]], dict[str, str] | None],
        second: tuple[str, Callable[[int], list[str]], dict[str, str] | None],
        ok: Collection[int] = (0,),
    ) -> tuple[Sample, Sample] | None:
        """Two commands measured in turns, run by run (``measure`` of each, interleaved)."""
        runs: tuple[list[Run], list[Run]] = ([], [])
        try:
            for index in range(self.runs):
                for (label, command, env), done in zip((first, second), runs, strict=True):
                    done.append(run_once(command(index), ok, env))
                    _progress(label, done[-1], index, self.runs)
        except (CommandFailed, OSError) as exc:
            self.failures.append(f"{first[0]} / {second[0]}: {exc}")
            self.rows.append(Row(second[0], "failed (see below)"))
            return None
        return _sample(runs[0]), _sample(runs[1])

    def add(self, measure: str, result: str, target: str = "—", met: bool | None = None) -> None:
        self.rows.append(Row(measure, result, target, met))


def seconds(value: float) -> str:
    return f"{value:.3g} s"


def timing(sample: Sample) -> str:
    return f"{seconds(sample.seconds)} · CPU {seconds(sample.cpu_seconds)}"


def throughput(docs: int, sample: Sample) -> str:
    return f"{timing(sample)} · {docs / sample.seconds:,.0f} docs/s"


def add_timed(bench: Bench, label: str, result: str, sample: Sample, target: float | None) -> None:
    if target is None:
        bench.add(label, result)
    else:
        bench.add(label, result, f"≤ {target:g} s", sample.seconds <= target)


def lint(gpustack: str, path: Path, *options: str) -> Callable[[int], list[str]]:
    return lambda _: [gpustack, "lint", *options, str(path)]


def cold(gpustack: str, path: Path, scratch: Path, *options: str, tag: str = "") -> Callable[[int], list[str]]:
    """A first run: an empty cache of its own each time (so its writes are counted)."""
    return lambda run: [
        gpustack, "lint", "--cache-dir", str(scratch / f"cold-{path.name}-{len(options)}{tag}-{run}"), *options, str(path)
    ]


def lint_rows(
    bench: Bench, gpustack: str, corpora: tuple[Corpus, Corpus, Corpus], cache: Path, scratch: Path
) -> None:
    """Lint figures, cold (an empty cache) and warm."""
    small, large, one = corpora
    small_folder = corpus_dir(small.docs, small.files, cache=cache)
    large_folder = corpus_dir(large.docs, large.files, cache=cache)
    one_file = next(corpus_dir(one.docs, one.files, cache=cache).rglob("*.yaml"))

    small_label = f"Lint {small} ({megabytes(small_folder)}), cold"
    small_run = bench.sample(small_label, cold(gpustack, small_folder, scratch), FOUND_OR_CLEAN)
    if small_run:
        add_timed(bench, small_label, throughput(small.docs, small_run), small_run, small.wall_target)
    large_label = f"Lint {large} ({megabytes(large_folder)}), cold"
    large_run = bench.sample(large_label, cold(gpustack, large_folder, scratch), FOUND_OR_CLEAN)
    if large_run:
        add_timed(bench, large_label, throughput(large.docs, large_run), large_run, large.wall_target)
        peak = large_run.peak_rss
        bench.add(f"Peak RSS, lint {large}", f"{peak / MB:.0f} MB", "≤ 300 MB", peak <= 300 * MB)
    label = f"Lint {large}, --no-cache"
    plain = bench.sample(label, lint(gpustack, large_folder, "--no-cache"), FOUND_OR_CLEAN)
    if plain:
        bench.add(label, throughput(large.docs, plain))
    if small_run and large_run:
        ratio = large_run.seconds / small_run.seconds
        bench.add(f"Scaling: time {large.docs:,} / {small.docs:,} docs", f"{ratio:.2f}", "≤ 5.5", ratio <= 5.5)
    warm_rows(bench, gpustack, large, large_folder, scratch)
    label = f"Lint one small file ({one.docs} docs), cold"
    one_run = bench.sample(label, cold(gpustack, one_file, scratch), FOUND_OR_CLEAN)
    if one_run:
        add_timed(bench, label, timing(one_run), one_run, one.wall_target)
    spec = spec_file(50, cache)
    label = f"Lint {large} with the 50-pool spec as context, cold"
    spec_run = bench.sample(label, cold(gpustack, large_folder, scratch, "--spec", str(spec)), FOUND_OR_CLEAN)
    if spec_run:
        bench.add(label, throughput(large.docs, spec_run))
    spec_seen_rows(bench, gpustack, one_file, spec, scratch)


def spec_seen_rows(bench: Bench, gpustack: str, one_file: Path, spec: Path, scratch: Path) -> None:
    """One small file with the 50-pool spec: cold, then changed before each run with a cache
    that has read the spec (a pre-commit hook's case: the files change, the spec seldom)."""
    label = "Lint one small file with the 50-pool spec, cold"
    sample = bench.sample(label, cold(gpustack, one_file, scratch, "--spec", str(spec)), FOUND_OR_CLEAN)
    if sample:
        bench.add(label, timing(sample))
    work = scratch / f"spec-seen-{one_file.name}"
    text = one_file.read_text(encoding="utf-8")
    store = ["--cache-dir", str(scratch / "spec-seen-cache"), "--spec", str(spec)]

    def edit(run: int) -> list[str]:
        work.write_text(f"{text}# edited before run {run}\n", encoding="utf-8")
        return [gpustack, "lint", *store, str(work)]

    if not filled(bench, edit(0)):
        return
    label = "Lint one small file with the 50-pool spec, changed, spec read before"
    sample = bench.sample(label, lambda run: edit(run + 1), FOUND_OR_CLEAN)
    if sample:
        bench.add(label, timing(sample))


def warm_rows(bench: Bench, gpustack: str, corpus: Corpus, folder: Path, scratch: Path) -> None:
    """Second runs over a copy of the corpus with its cache filled: nothing changed, then one
    file changed before each run (a line added: its documents are read again, the others'
    come from the cache, and every rule runs over the whole set)."""
    work = scratch / f"warm-{folder.name}"
    shutil.copytree(folder, work)
    store = ["--cache-dir", str(scratch / f"warm-cache-{folder.name}")]
    if not filled(bench, [gpustack, "lint", *store, str(work)]):
        return
    label = f"Lint {corpus}, warm: nothing changed"
    sample = bench.sample(label, lint(gpustack, work, *store), FOUND_OR_CLEAN)
    if sample:
        add_timed(bench, label, timing(sample), sample, WARM_TARGET)
    files = sorted(work.rglob("*.yaml"))
    changed = files[len(files) // 2]
    text = changed.read_text(encoding="utf-8")

    def edit(run: int) -> list[str]:
        changed.write_text(f"{text}# edited before run {run}\n", encoding="utf-8")
        return [gpustack, "lint", *store, str(work)]

    label = f"Lint {corpus}, warm: one file changed"
    sample = bench.sample(label, edit, FOUND_OR_CLEAN)
    if sample:
        add_timed(bench, label, timing(sample), sample, ONE_CHANGED_TARGET)


def filled(bench: Bench, command: list[str]) -> bool:
    """Run ``command`` once to fill a cache for the warm runs; False (a failure recorded) if it fails."""
    try:
        run_once(command, FOUND_OR_CLEAN, None)
    except (CommandFailed, OSError) as exc:
        bench.failures.append(f"filling the cache: {exc}")
        return False
    return True


def megabytes(folder: Path) -> str:
    size = sum(path.stat().st_size for path in folder.rglob("*.yaml"))
    return f"{size / MB:.1f} MB"


def checkov_rows(bench: Bench, checkov: str | None, gpustack: str, corpus: Corpus, cache: Path, scratch: Path) -> None:
    """checkov on the small corpus, each run right after a cold gpustack run on it: the
    speed-up compares runs minutes apart at most, on a machine whose speed drifts."""
    label = f"checkov {corpus}"
    if checkov is None:
        bench.add(label, "not installed (pass --checkov PATH)")
        return
    folder = corpus_dir(corpus.docs, corpus.files, cache=cache)
    # checkov skips any path under a folder whose name starts with "." (our cache is
    # benchmarks/.corpus) unless told not to: without this it lints nothing, fast.
    env = os.environ | {"CKV_IGNORE_HIDDEN_DIRECTORIES": "false"}
    ours_label = f"Lint {corpus}, cold, beside checkov"
    paired = bench.sample_pair(
        (ours_label, cold(gpustack, folder, scratch, tag="-beside-checkov"), None),
        (label, lambda _: [checkov, "-d", str(folder), *CHECKOV_FLAGS], env),
        FOUND_OR_CLEAN,
    )
    if paired is None:
        return
    ours, theirs = paired
    add_timed(bench, ours_label, throughput(corpus.docs, ours), ours, None)
    bench.add(label, throughput(corpus.docs, theirs))
    speedup = theirs.seconds / ours.seconds
    cpu = theirs.cpu_seconds / ours.cpu_seconds
    bench.add(f"Speed-up over checkov, {corpus}", f"{speedup:.1f}× (CPU time {cpu:.1f}×)", "≥ 50×", speedup >= 50)


def render(gpustack: str, spec: Path, scratch: Path) -> Callable[[int], list[str]]:
    """Each run renders into a folder of its own: cold, nothing left by the run before."""
    return lambda run: [gpustack, "render", str(spec), "-o", str(scratch / f"{spec.stem}-{run}")]


def render_rows(bench: Bench, gpustack: str, cache: Path) -> None:
    examples = sorted((REPO / "examples").glob("*.yaml"))
    generated = spec_file(50, cache)
    with tempfile.TemporaryDirectory() as scratch:
        for spec in [*examples, generated]:
            label = f"Render {spec.relative_to(REPO) if spec in examples else 'generated spec, 50 node pools'} (cold)"
            sample = bench.sample(label, render(gpustack, spec, Path(scratch)))
            if sample:
                add_timed(bench, label, timing(sample), sample, RENDER_TARGET if spec in examples else None)


def version(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except OSError:
        return "?"
    return done.stdout.strip().split()[-1] if done.stdout.strip() else "?"


def revision() -> str:
    """The commit measured, marked when the working tree differs from it."""
    git = ["git", "-C", str(REPO)]
    try:
        head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True)
    except OSError:
        return "not a git checkout"
    return f"{head or '?'}{' with uncommitted changes' if dirty.stdout.strip() else ''}"


def default_gpustack() -> str | None:
    """The ``gpustack`` beside this interpreter (a venv's), else the one on PATH."""
    beside = Path(sys.executable).parent / "gpustack"
    return str(beside) if beside.exists() else shutil.which("gpustack")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller corpora and one run each (a smoke test)")
    parser.add_argument("--runs", type=int, help="runs per figure; the median is reported (default 5, quick 1)")
    parser.add_argument("--checkov", help="checkov executable (default: checkov on PATH, if any)")
    parser.add_argument("--gpustack", default=default_gpustack(), help="gpustack executable")
    parser.add_argument("--cache", type=Path, default=CACHE, help=f"corpus folder (default {CACHE})")
    parser.add_argument("--no-render", action="store_true", help="lint figures only")
    args = parser.parse_args(argv)
    if args.gpustack is None:
        parser.error("no gpustack executable found: install the package or pass --gpustack")
    args.runs = args.runs or (1 if args.quick else 5)
    args.checkov = args.checkov or shutil.which("checkov")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    load_before = os.getloadavg()[0]
    corpora = QUICK if args.quick else FULL
    bench = Bench(args.runs)
    with tempfile.TemporaryDirectory(prefix="gpustack-bench-") as scratch:
        lint_rows(bench, args.gpustack, corpora, args.cache, Path(scratch))
        checkov_rows(bench, args.checkov, args.gpustack, corpora[0], args.cache, Path(scratch))
    if not args.no_render:
        render_rows(bench, args.gpustack, args.cache)

    tools = f"gpustack {version([args.gpustack, '--version'])} at {revision()}"
    if args.checkov:
        tools += f", checkov {version([args.checkov, '--version'])}"
    command = shlex.join(["python", "benchmarks/run.py", *(sys.argv[1:] if argv is None else argv)])
    print(
        f"`{command}`: "
        f"{platform.system()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; {tools}; "
        f"median of {args.runs} run{'s' if args.runs > 1 else ''}, wall and CPU time of whole processes "
        "(bytecode cached, as installed); "
        f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after.\n"
    )
    print("| Measure | Result | Target | Met |\n|---|---|---|---|")
    print("\n".join(row.markdown() for row in bench.rows))
    for failure in bench.failures:
        print(f"\nFailed: {failure}")
    return 1 if bench.failures else 0


if __name__ == "__main__":
    sys.exit(main())
