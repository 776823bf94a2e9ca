"""A container's command line: the strings of ``command`` then ``args``, with their paths."""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.model import Container, Path


def command_parts(container: Container) -> tuple[tuple[Path, str], ...]:
    """The strings of ``command`` then ``args``, each with its path (read once per container:
    several rules and set facts scan every container's command line)."""
    return container.once("command_parts", lambda c: tuple(_parts(c)))


def _parts(container: Container) -> Iterator[tuple[Path, str]]:
    for key in ("command", "args"):
        items = container.data.get(key)
        if isinstance(items, list):
            for index, item in enumerate(items):
                if isinstance(item, (str, int, float)) and not isinstance(item, bool):
                    yield (*container.path, key, index), str(item)
