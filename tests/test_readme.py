"""The README and the documentation pages say what gpustack and CI do: the set-up commands are what
CI runs, the examples shown are what gpustack prints, and the lists that name rules or examples
name every one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lint_support import gpustack

from gpustack.lint.rules import RULES


def read(repo: Path, page: str) -> str:
    return (repo / page).read_text(encoding="utf-8")


def section(text: str, heading: str) -> str:
    """The section under ``heading`` (a whole line), up to the next heading of its level or above."""
    level = heading.split(" ", 1)[0]
    body = text.split(f"\n{heading}\n", 1)[1]
    return re.split(rf"\n#{{1,{len(level)}}} ", body, maxsplit=1)[0]


def first_block(text: str, language: str) -> str:
    return text.split(f"```{language}\n", 1)[1].split("```", 1)[0]


def setup_commands(text: str, heading: str) -> list[str]:
    return [line for line in first_block(section(text, heading), "sh").splitlines() if line.strip()]


def test_ci_runs_the_setup_commands(repo: Path) -> None:
    commands = setup_commands(read(repo, "README.md"), "## Set-up")
    ci = read(repo, ".ci/run").splitlines()
    assert len(commands) == 2
    for command in commands:
        assert command in ci, f"{command!r} is not a line of .ci/run"


def test_the_rule_count_and_every_rule_id_are_on_the_lint_page(repo: Path) -> None:
    rules = section(read(repo, "docs/lint/index.md"), "## The rules")
    assert f"{len(RULES)} rules" in rules
    mentioned = set(re.findall(r"GS\d{3}", rules))
    for first, last in re.findall(r"GS(\d{3})–GS(\d{3})", rules):
        mentioned |= {f"GS{n:03d}" for n in range(int(first), int(last) + 1)}
    assert set(RULES) <= mentioned


def test_the_examples_table_lists_every_example(repo: Path) -> None:
    table = section(read(repo, "docs/spec/index.md"), "## Examples")
    listed = set(re.findall(r"^\| `(examples/[^`]+)` \|", table, re.MULTILINE))
    examples = {path.relative_to(repo).as_posix() for path in (repo / "examples").rglob("*.yaml")}
    assert listed == examples


def test_the_autofix_table_lists_every_fixable_rule(repo: Path) -> None:
    from gpustack.lint.catalogue import load_catalogue

    table = section(read(repo, "docs/lint/autofix.md"), "## What is fixed")
    rows = re.findall(r"^\| (GS\d{3}) \|", table, re.MULTILINE)
    assert len(rows) == len(set(rows))
    assert set(rows) == {rule for rule, info in load_catalogue().items() if info.fixable}


@pytest.mark.parametrize(("page", "heading", "name", "language"), [
    ("docs/install.md", "## From a clone", "setup", "sh"),
    ("docs/ci.md", "## pre-commit", "pre-commit", "yaml"),
    ("docs/ci.md", "## GitHub Actions", "workflow", "yaml"),
])
def test_the_site_includes_the_readme_s_commands_and_snippets(repo: Path, page: str, heading: str, name: str, language: str) -> None:
    """The set-up commands and the CI snippets are written once, in the README; the site's
    pages include them (pymdownx.snippets sections), so the two never drift apart."""
    readme = read(repo, "README.md")
    start, end = f"<!-- --8<-- [start:{name}] -->\n", f"<!-- --8<-- [end:{name}] -->"
    assert readme.count(start) == 1 and readme.count(end) == 1
    included = readme.split(start, 1)[1].split(end, 1)[0]
    assert included.startswith(f"```{language}\n") and included.endswith("```\n")
    assert f'--8<-- "README.md:{name}"' in section(read(repo, page), heading)


def test_the_readme_lint_example_is_what_lint_prints(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    console = first_block(section(read(repo, "README.md"), "## Lint manifests"), "console")
    command, shown = console.split("\n", 1)
    assert command == "$ gpustack lint examples/manifests/seed-pitfalls.yaml --spec examples/hami-vllm.yaml"
    monkeypatch.chdir(repo)
    code, out, err = gpustack(capsys, *command.split()[2:], "--cache-dir", str(tmp_path))
    assert code == 1 and out + err == shown


def test_the_readme_render_example_lists_the_committed_stack(repo: Path) -> None:
    """`output/k3s-l4/` is what the same spec renders to (a test holds it to that)."""
    console = first_block(section(read(repo, "README.md"), "## Render a stack"), "console")
    files = [path for path in (repo / "output" / "k3s-l4").rglob("*") if path.is_file()]
    top = sorted(path.name for path in (repo / "output" / "k3s-l4").iterdir())
    assert f"stack: {len(files)} files" in console.splitlines()
    assert console.splitlines()[-1].split() == top
