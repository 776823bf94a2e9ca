"""Prove that a change leaves the linter's findings on the real corpora unchanged.

Lints the vendor corpus (``../shared/corpus``, each source repository's files as one set) and
every repository of the GitOps corpus (``../shared/corpus-gitops/corpus/OWNER+NAME``, each
with the distribution its ``SOURCES.tsv`` records) with the code of this checkout and with the code of an older
commit, and compares the JSON reports byte for byte (the ``root`` field aside, which names
the folder the older code was linted from when it differs).

    python benchmarks/same_findings.py --before b446115       # exit 0: identical
    python benchmarks/same_findings.py --before HEAD~3 --shared /path/to/shared

The older commit is exported with ``git archive`` into a scratch folder and run as
``python -P -m gpustack`` with that folder first on ``PYTHONPATH``: the same interpreter
and installed dependencies, the older package's code.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent


def corpus_runs(shared: Path) -> list[tuple[str, list[str]]]:
    """Each run as (name, lint arguments): the vendor corpus's files per source repository (its
    ``SOURCES.tsv``; linted whole where there is none), then each GitOps repository. A
    repository is what a user lints together: the vendor corpus is files of many repositories
    flattened into one folder, and linted as one set it pairs one repository's device plugin
    with another's."""
    runs = vendor_runs(shared / "corpus")
    sources = shared / "corpus-gitops" / "SOURCES.tsv"
    distributions: dict[str, str] = {}
    with sources.open(encoding="utf-8") as table:
        for row in csv.DictReader(table, delimiter="\t"):
            distributions.setdefault(row["file"].split("/", 1)[0], row["distribution"])
    for folder in sorted((shared / "corpus-gitops" / "corpus").iterdir()):
        arguments = [str(folder)]
        distribution = distributions.get(folder.name, "")
        if distribution and distribution != "unknown":
            arguments += ["--distribution", distribution]
        runs.append((f"corpus-gitops/{folder.name}", arguments))
    return runs


def vendor_runs(corpus: Path) -> list[tuple[str, list[str]]]:
    """The vendor corpus's files grouped by the repository ``SOURCES.tsv`` names for each."""
    sources = corpus / "SOURCES.tsv"
    if not sources.is_file():
        return [("corpus", [str(corpus)])]
    repositories: dict[str, list[str]] = {}
    with sources.open(encoding="utf-8") as table:
        for row in csv.DictReader(table, delimiter="\t"):
            if (corpus / row["file"]).is_file():
                repositories.setdefault(row["repo"], []).append(str(corpus / row["file"]))
    return [(f"corpus/{repo}", sorted(files)) for repo, files in sorted(repositories.items())]


def lint_json(code: Path | None, arguments: list[str]) -> dict:
    """One JSON report of ``gpustack lint``; ``code`` is an older package's folder, or None."""
    environment = dict(os.environ)
    command = [sys.executable, "-m", "gpustack"]
    if code is not None:
        environment["PYTHONPATH"] = str(code)
        command = [sys.executable, "-P", "-m", "gpustack"]
    completed = subprocess.run(
        [*command, "lint", *arguments, "--format", "json", "--no-cache", "--fail-on", "error"],
        capture_output=True,
        text=True,
        env=environment,
        cwd=REPOSITORY if code is None else code,
    )
    if completed.returncode not in (0, 1):
        raise SystemExit(f"gpustack lint {' '.join(arguments)} exited {completed.returncode}:\n{completed.stderr}")
    report = json.loads(completed.stdout)
    report.pop("root", None)
    return report


def export(commit: str, into: Path) -> Path:
    """The tree of ``commit`` written into ``into`` (``git archive``)."""
    archive = subprocess.run(["git", "-C", str(REPOSITORY), "archive", commit], capture_output=True, check=True)
    archive_path = into / "tree.tar"
    archive_path.write_bytes(archive.stdout)
    with tarfile.open(archive_path) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the older commit to compare with")
    parser.add_argument("--shared", type=Path, default=REPOSITORY.parent / "shared", help="the folder holding corpus/ and corpus-gitops/")
    options = parser.parse_args()
    if not (options.shared / "corpus").is_dir():
        print(f"no corpus under {options.shared}: nothing to compare", file=sys.stderr)
        return 2
    differences = 0
    findings = 0
    with tempfile.TemporaryDirectory() as scratch:
        older = export(options.before, Path(scratch))
        for name, arguments in corpus_runs(options.shared):
            now, then = lint_json(None, arguments), lint_json(older, arguments)
            findings += len(now.get("findings", []))
            if now != then:
                differences += 1
                print(f"DIFFERENT: {name}")
                for key in sorted(set(now) | set(then)):
                    if now.get(key) != then.get(key):
                        print(f"  {key}: {json.dumps(then.get(key))[:400]}\n  -> {json.dumps(now.get(key))[:400]}")
    print(f"{findings} findings; {differences} run(s) differ from {options.before}")
    return 1 if differences else 0


if __name__ == "__main__":
    raise SystemExit(main())
