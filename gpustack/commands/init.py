"""``gpustack init``: write a first spec from a few answers or from ``gpustack discover``."""

from __future__ import annotations

import sys
from typing import Annotated, Literal

import typer

from gpustack.errors import GpustackError

DEFAULT_FILE = "gpustack.yaml"
KUBERNETES_VERSION = "1.36"  # the spec's default cluster.kubernetesVersion


def init(
    file: Annotated[
        str,
        typer.Argument(help="The spec file to write (- prints it); never overwritten without --force.", metavar="FILE"),
    ] = DEFAULT_FILE,
    gpu: Annotated[
        str | None,
        typer.Option("--gpu", metavar="MODEL", help="GPU model or alias, e.g. L4, H100, \"RTX 4090\" (`gpustack gpus`).",
                     show_default=False),
    ] = None,
    count: Annotated[int | None, typer.Option("--count", min=1, max=16, help="GPUs per node.", show_default="1")] = None,
    nodes: Annotated[int, typer.Option("--nodes", min=1, help="Nodes in the GPU pool.")] = 1,
    distribution: Annotated[
        Literal["k3s", "kubeadm", "talos"] | None,
        typer.Option("--distribution", help="k3s, kubeadm or talos.", show_default="k3s"),
    ] = None,
    kubernetes_version: Annotated[
        str, typer.Option("--kubernetes-version", metavar="1.N", help="The cluster's Kubernetes minor version.")
    ] = KUBERNETES_VERSION,
    driver: Annotated[
        Literal["host", "operator"],
        typer.Option("--driver", help="host (installed on the node) or operator (the GPU Operator's container)."),
    ] = "host",
    name: Annotated[
        str | None,
        typer.Option("--name", help="metadata.name (default: from FILE, e.g. prod-gpus.yaml -> prod-gpus).",
                     show_default=False),
    ] = None,
    from_discover: Annotated[
        str | None,
        typer.Option(
            "--from-discover", metavar="FILE",
            help="Start from what `gpustack discover` printed on a GPU node (- reads standard input).",
            show_default=False,
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace FILE if it exists.")] = False,
) -> None:
    """Write a first spec: from a question or two, from options, or from `gpustack discover`.

    In a terminal, init asks for what the options leave out (distribution, GPU model, GPUs per
    node); otherwise --gpu is needed, unless --from-discover gives the node pool.

    The spec it writes passes `gpustack validate`; exit 2 when FILE exists (without --force) or
    an answer is not valid.

    Example: gpustack init --gpu L4 --distribution k3s cluster.yaml
    """
    from gpustack.spec import starter

    stack_name = name or starter.stack_name(file)
    if from_discover is not None:
        document = starter.from_discovered(
            stack_name, kubernetes_version, starter.read_discovered(from_discover), from_discover
        )
    else:
        asking = sys.stdin.isatty()
        if gpu is None and not asking:
            raise GpustackError("--gpu MODEL is needed when init cannot ask (`gpustack gpus` lists the models)")
        answers = starter.Answers(
            name=stack_name,
            distribution=distribution or (_ask_distribution() if asking else "k3s"),
            kubernetes_version=kubernetes_version,
            gpu=gpu if gpu is not None else _ask_gpu(),
            gpus_per_node=count or (typer.prompt("GPUs per node", default=1, type=int) if asking else 1),
            nodes=nodes,
            driver=driver,
        )
        document = starter.from_answers(answers)
    _write(file, starter.text(document, file), force=force)
    _check(file)


def _ask_distribution() -> str:
    while True:
        answer = str(typer.prompt("Kubernetes distribution (k3s, kubeadm or talos)", default="k3s")).strip().lower()
        if answer in ("k3s", "kubeadm", "talos"):
            return answer
        typer.echo(f"{answer!r} is none of k3s, kubeadm, talos", err=True)


def _ask_gpu() -> str:
    from gpustack.spec import starter

    while True:
        answer = str(typer.prompt("GPU model (`gpustack gpus` lists them)", default="L4"))
        try:
            return starter.catalogue_model(answer)
        except GpustackError as exc:
            typer.echo(str(exc.problems[0]), err=True)


def _write(file: str, text: str, *, force: bool) -> None:
    if file == "-":
        sys.stdout.write(text)
        return
    try:
        with open(file, "w" if force else "x", encoding="utf-8") as out:
            out.write(text)
    except FileExistsError:
        raise GpustackError(f"{file} exists: init does not overwrite a spec (--force replaces it)") from None
    except OSError as exc:
        raise GpustackError(f"cannot write {file}: {exc.strerror or exc}") from None


def _check(file: str) -> None:
    """Validate what was written: a discovered GPU outside the catalogue leaves gpu.custom to fill."""
    from gpustack.spec.load import load_spec

    if file == "-":
        return
    try:
        load_spec(file)
    except GpustackError as exc:
        for problem in exc.problems:
            typer.echo(f"to do: {problem}", err=True)
        typer.echo(f"{file}: written; fill in what is listed, then `gpustack validate {file}`", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"{file}: written and valid; next: `gpustack render {file}`", err=True)
