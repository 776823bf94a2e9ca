"""``gpustack lint`` with a plain command line skips typer's coercion (and pydantic); the
result must be exactly what typer's path gives: exit code, standard output and error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpustack import cli

FIXTURE = Path(__file__).parent / "rules" / "fixtures" / "GS001" / "fires-nodeselector-despite-or.yaml"


def run(capsys: pytest.CaptureFixture[str], call: object) -> tuple[object, str, str]:
    try:
        call()  # type: ignore[operator]
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    out, err = capsys.readouterr()
    return code, out, err


COMMAND_LINES = [
    [str(FIXTURE)],
    ["--format", "json", str(FIXTURE)],
    [str(FIXTURE), "-f", "sarif", "--distribution", "k3s"],
    ["--format=github", "--fail-on=error", str(FIXTURE)],
    ["--select", "GS001", "--select", "GS023", "--severity", "GS001=error", str(FIXTURE)],
    ["--ignore", "GS001", "--show-suppressed", "--no-suppressions", str(FIXTURE)],
    ["--partial", "--kubernetes-version", "1.31", str(FIXTURE)],
    ["--diff", str(FIXTURE)],
    ["no-such-file.yaml"],
]


@pytest.mark.parametrize("args", COMMAND_LINES, ids=lambda args: " ".join(args).replace(str(FIXTURE), "F"))
def test_plain_command_lines_take_the_direct_path_with_typer_s_result(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli._plain_lint_call(["lint", *args]) is not None
    direct = run(capsys, lambda: cli.main(["lint", *args]))
    typer_path = run(capsys, lambda: cli.app(args=["lint", *args]))
    assert direct == typer_path


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--format", "xml", "x.yaml"],
        ["--format"],
        ["-fjson", "x.yaml"],
        ["--no-such-option", "x.yaml"],
        ["--", "x.yaml"],
        ["--fix=yes", "x.yaml"],
        ["--spec", "--fix", "x.yaml"],
    ],
)
def test_anything_else_goes_through_typer(args: list[str]) -> None:
    assert cli._plain_lint_call(["lint", *args]) is None


def test_usage_errors_the_command_raises_read_as_typer_words_them(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["lint", "--fix", "--diff", str(FIXTURE)]
    assert cli._plain_lint_call(args) is not None
    direct = run(capsys, lambda: cli.main(args))
    assert direct == run(capsys, lambda: cli.app(args=args))
    assert direct[0] == 2 and "--fix and --diff exclude each other" in direct[2]


def test_a_plain_lint_imports_neither_pydantic_nor_ruamel() -> None:
    code = (
        "import sys\nfrom gpustack.cli import main\n"
        f"try:\n    main(['lint', {str(FIXTURE)!r}])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'ruamel', 'jsonschema')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
