"""The stacks the Flux tier checks: every example whose spec enables ``gitops.flux`` (its committed
output), and every example rendered again with Flux at its defaults (``chart.spec``, values
inline), so that both chart references and both kinds of values are checked whichever examples
enable Flux."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gpustack.render import app
from gpustack.render.component import RenderContext
from gpustack.spec.load import load_spec
from gpustack.spec.models import GpuStack
from gpustack.yamlio import dump

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))


def stack(path: Path) -> GpuStack:
    return load_spec(str(path)).stack


FLUX_EXAMPLES = [path for path in EXAMPLES if stack(path).spec.gitops.flux.enabled]


def flux_variant(example: Path, folder: Path, **flux: Any) -> Path:
    """``example`` delivered by Flux (``flux`` over its defaults, no Argo CD or K3s HelmCharts),
    rendered into ``folder``; returns the stack folder."""
    document = yaml.safe_load(example.read_text(encoding="utf-8"))
    gitops = document["spec"].setdefault("gitops", {})
    gitops.pop("argocd", None)
    gitops.pop("k3sHelmCharts", None)
    gitops["flux"] = {"enabled": True, **flux}
    spec = folder / f"{example.stem}.yaml"
    folder.mkdir(parents=True, exist_ok=True)
    spec.write_text(dump(document), encoding="utf-8")
    loaded = load_spec(str(spec))
    rendered = app.render(RenderContext(stack=loaded.stack, spec_file=loaded.file))
    out = folder / example.stem
    for relative, text in app.tree(rendered).items():
        (out / relative).parent.mkdir(parents=True, exist_ok=True)
        (out / relative).write_text(text, encoding="utf-8")
    return out


def flux_files(folder: Path) -> list[Path]:
    """The stack's Flux files (the layers' kustomization.yaml lists are no API objects)."""
    return sorted(p for p in (folder / "flux").rglob("*.yaml") if p.name != "kustomization.yaml")


def require_charts() -> None:
    """The packaged upstream charts and helm, or the tier is unavailable (skipped; failed in CI)."""
    from tests.cluster import deploy
    from tests.cluster.support import unavailable

    if not deploy.CHARTS.is_dir():
        unavailable(f"{deploy.CHARTS} not present (the packaged upstream charts)")
    try:
        deploy.find_helm()
    except deploy.Unavailable as missing:
        unavailable(str(missing))


def documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]
