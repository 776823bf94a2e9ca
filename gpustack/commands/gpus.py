"""``gpustack gpus``: the GPU catalogue, the model names a spec's ``gpu.model`` accepts."""

from __future__ import annotations

import sys
from typing import Annotated, Literal

import typer


def gpus(
    output_format: Annotated[
        Literal["table", "json"], typer.Option("--format", "-f", help="table, or json with every field.")
    ] = "table",
) -> None:
    """List the GPU models of the catalogue, with their aliases and facts.

    A spec names one in nodePools[].gpu.model: by name or alias, in any case, with spaces or
    underscores for dashes ("RTX 4090"). A GPU that is not listed is described with gpu.custom.
    """
    from gpustack.spec.gpu_catalogue import catalogue_json, catalogue_table, load_catalogue

    catalogue = load_catalogue()
    sys.stdout.write(catalogue_json(catalogue) if output_format == "json" else catalogue_table(catalogue))
