"""Rule fixtures that are folders: ``fixtures/GSNNN/fires-*/`` and ``clean-*/`` hold a set of
files linted together, as ``gpustack lint FOLDER`` reads them (a Helm chart folder kept in Git:
``Chart.yaml`` and ``values.yaml``, a wrapper's dependencies). Marks as in the one-file
fixtures (conftest): every line that must be reported carries ``# expect: GSNNN``, in whichever
file of the folder; the reported (file, line) pairs of the rule must be exactly those, each
once. ``# distribution: NAME`` on the first line of a file sets the cluster context."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpustack.lint.engine import lint
from gpustack.lint.input.discover import read_inputs
from gpustack.lint.input.load import load_inputs
from gpustack.lint.policy.config import Config

FIXTURES = Path(__file__).parent / "fixtures"
_EXPECT = re.compile(r"#\s*expect:\s*(GS\d{3}(?:\s*,\s*GS\d{3})*)")
_DISTRIBUTION = re.compile(r"^#\s*distribution:\s*(\S+)")
FOLDERS = sorted(
    path for path in FIXTURES.glob("GS[0-9][0-9][0-9]/*") if path.is_dir() and path.name.startswith(("fires-", "clean-"))
)


def _files(folder: Path) -> dict[str, str]:
    return {path.relative_to(folder).as_posix(): path.read_text("utf-8") for path in sorted(folder.rglob("*")) if path.is_file()}


def _expected(files: dict[str, str], rule: str) -> list[tuple[str, int]]:
    return sorted(
        (name, number)
        for name, text in files.items()
        for number, line in enumerate(text.splitlines(), start=1)
        if (match := _EXPECT.search(line)) and rule in re.split(r"\s*,\s*", match.group(1))
    )


def _distribution(files: dict[str, str]) -> str | None:
    return next((match.group(1) for text in files.values() if (match := _DISTRIBUTION.match(text))), None)


@pytest.mark.parametrize("folder", FOLDERS, ids=[f"{path.parent.name}/{path.name}" for path in FOLDERS])
def test_folder_fixture(folder: Path) -> None:
    rule = folder.parent.name
    files = _files(folder)
    loaded = load_inputs(read_inputs([str(folder)]))
    assert not loaded.errors, loaded.errors
    report = lint(loaded, Config(distribution=_distribution(files)))
    assert not report.errors, report.errors  # a rule that raised
    reported = sorted(
        (Path(finding.file).relative_to(folder).as_posix(), finding.line) for finding in report.findings if finding.rule == rule
    )
    if folder.name.startswith("fires-"):
        expected = _expected(files, rule)
        assert expected, f"{folder}: a fires fixture needs `# expect: {rule}` lines"
        assert reported == expected
    else:
        assert not reported, f"{rule} reported {reported}"


def test_there_are_folder_fixtures() -> None:
    assert any(path.name.startswith("fires-") for path in FOLDERS)
    assert any(path.name.startswith("clean-") for path in FOLDERS)
