"""Helpers shared by the render tests (imported by name; conftest.py holds the fixtures)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from gpustack.cli import main
from gpustack.render import app
from gpustack.render.component import RenderContext
from gpustack.render.rendered import Rendered
from gpustack.spec.load import load_spec
from gpustack.yamlio import dump

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))

Result = tuple[Rendered, dict[str, str]]

MINIMAL: dict[str, Any] = {
    "apiVersion": "gpustack.io/v1alpha1",
    "kind": "GpuStack",
    "metadata": {"name": "test"},
    "spec": {
        "cluster": {"distribution": "k3s", "kubernetesVersion": "1.36"},
        "nodePools": [{"name": "gpu", "gpu": {"model": "L4"}}],
    },
}


def render_file(path: Path) -> Result:
    loaded = load_spec(str(path))
    rendered = app.render(RenderContext(stack=loaded.stack, spec_file=loaded.file))
    return rendered, app.tree(rendered)


def spec_document(**spec: Any) -> dict[str, Any]:
    """The minimal spec with ``spec`` sections deep-merged over it."""
    return _merge(copy.deepcopy(MINIMAL), {"spec": spec})


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


def release(rendered: Rendered, name: str) -> dict[str, Any]:
    """The values of one release (fails the test when it is absent)."""
    by_name = {r.name: r for r in rendered.releases}
    assert name in by_name, f"no release {name}; have {sorted(by_name)}"
    return dict(by_name[name].values)


def cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    """Run the gpustack CLI in-process: (exit code, standard output, standard error)."""
    with pytest.raises(SystemExit) as exit_info:
        main(list(argv))
    out, err = capsys.readouterr()
    return exit_info.value.code or 0, out, err


def write_spec(folder: Path, **spec: Any) -> str:
    """A spec file built from the minimal spec plus ``spec`` sections; its path."""
    path = folder / "spec.yaml"
    path.write_text(dump(spec_document(**spec)), encoding="utf-8")
    return str(path)
