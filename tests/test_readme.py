"""The README's two set-up commands are what CI runs."""

from __future__ import annotations

from pathlib import Path


def setup_commands(readme: str) -> list[str]:
    section = readme.split("## Set-up", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def test_ci_runs_the_readme_setup_commands(repo: Path) -> None:
    commands = setup_commands((repo / "README.md").read_text(encoding="utf-8"))
    ci = (repo / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert len(commands) == 2
    for command in commands:
        assert command in ci, f"{command!r} is not a line of .ci/run"
