"""``gpustack doctor`` and ``gpustack discover``: run on a GPU node, read-only."""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated

import typer

from gpustack.commands.options import ColorOption
from gpustack.errors import GpustackError

RootOption = Annotated[
    str, typer.Option("--root", help="Read the node's files under this folder (a mounted node image, a test tree).")
]


class Format(StrEnum):
    text = "text"
    json = "json"


def doctor(
    root: RootOption = "/",
    output_format: Annotated[Format, typer.Option("--format", help="text (one line per layer) or json.")] = Format.text,
    color: ColorOption = None,
) -> None:
    """Check each layer a GPU needs on this node, from the PCI bus to the device plugin.

    Prints ok, problem (with what to do and the upstream documentation of that step) or n/a per layer; without an NVIDIA GPU the layers after pci are not checked.
    Exits 0 when every applicable layer is ok, 1 otherwise.
    """
    from gpustack.node import layers, report
    from gpustack.node.root import NodeRoot
    from gpustack.terminal import painter, use_color

    node = NodeRoot.open(root)
    results = layers.run(node)
    if output_format is Format.json:
        typer.echo(report.as_json(node, results), nl=False)
    else:
        # color=True: the text is painted only when colour was chosen; echo would strip it off a terminal.
        typer.echo(report.text(results, painter(use_color(sys.stdout, color))), nl=False, color=True)
    if not layers.healthy(results):
        raise typer.Exit(1)


def discover(root: RootOption = "/") -> None:
    """Print this node's pool for a spec: GPU model, count, driver, toolkit mode, distribution."""
    from gpustack.node.discover import discover as discover_node
    from gpustack.node.discover import snippet
    from gpustack.node.root import Malformed, NodeRoot, Unreadable

    try:
        found = discover_node(NodeRoot.open(root))
    except (Malformed, Unreadable) as exc:
        raise GpustackError(str(exc)) from None
    typer.echo(snippet(found), nl=False)
