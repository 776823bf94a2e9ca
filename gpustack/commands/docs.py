"""``gpustack docs``: write the documentation site's generated pages."""

from pathlib import Path
from typing import Annotated

import typer


def docs(
    folder: Annotated[
        Path, typer.Argument(help="The site's docs folder (mkdocs.yml's docs_dir).", metavar="FOLDER")
    ] = Path("docs"),
) -> None:
    """Write the generated pages of the documentation site: rules/GSNNN.md and rules/index.md from the rule catalogue, spec/reference.md from the spec's JSON Schema.

    Run it after changing a policy or the spec (after gpustack schema); a test fails while the committed pages are stale.
    """
    from gpustack.errors import GpustackError
    from gpustack.site_pages import write_pages

    if not folder.is_dir():
        raise GpustackError(f"{folder}: no such folder (the site's docs folder, e.g. docs)")
    try:
        changed = write_pages(folder)
    except OSError as exc:
        raise GpustackError(f"cannot write the pages under {folder}: {exc.strerror or exc}") from None
    typer.echo("\n".join(str(folder / name) for name in changed) if changed else "up to date")
