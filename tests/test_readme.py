"""The README's two set-up commands are what CI runs."""

from __future__ import annotations

import re
from pathlib import Path

from gpustack.lint.rules import RULES


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


def test_the_rule_count_and_every_rule_id_are_in_the_lint_section(repo: Path) -> None:
    section = (repo / "README.md").read_text(encoding="utf-8").split("## gpustack lint", 1)[1]
    assert f"{len(RULES)} rules" in section
    mentioned = set(re.findall(r"GS\d{3}", section))
    for first, last in re.findall(r"GS(\d{3})–GS(\d{3})", section):
        mentioned |= {f"GS{n:03d}" for n in range(int(first), int(last) + 1)}
    assert set(RULES) <= mentioned


def section(readme: str, heading: str) -> str:
    return readme.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


def test_the_examples_table_lists_every_example(repo: Path) -> None:
    table = section((repo / "README.md").read_text(encoding="utf-8"), "## Examples")
    linked = set(re.findall(r"^\| \[`(examples/[^`]+)`\]\(\1\)", table, re.MULTILINE))
    examples = {path.relative_to(repo).as_posix() for path in (repo / "examples").rglob("*.yaml")}
    assert linked == examples


def test_the_autofix_table_lists_every_fixable_rule(repo: Path) -> None:
    from gpustack.lint.catalogue import load_catalogue

    table = section((repo / "README.md").read_text(encoding="utf-8"), "## Autofix")
    rows = re.findall(r"^\| (GS\d{3}) \|", table, re.MULTILINE)
    assert len(rows) == len(set(rows))
    assert set(rows) == {rule for rule, info in load_catalogue().items() if info.fixable}
