"""Test rules and a test catalogue, so that engine, policy and reporter tests do not depend
on what the shipped rules find. Ids GS9xx are never shipped. Also the loading helpers only
tests use: ``load_paths`` (read and parse in one call) and ``with_precise_positions``. (A
plain module: the test folders are not packages, and conftest modules must keep distinct
names.)"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from datetime import date
from functools import partial
from pathlib import Path
from textwrap import dedent
from typing import BinaryIO

import pytest

from gpustack.cli import main
from gpustack.lint.catalogue import Example, RuleInfo
from gpustack.lint.context import LintContext
from gpustack.lint.engine import lint
from gpustack.lint.input.discover import read_inputs
from gpustack.lint.input.load import DocumentCache, LoadResult, load_inputs, load_text
from gpustack.lint.input.positions import Source
from gpustack.lint.model import Hit, PodSpec, Resource, Severity
from gpustack.lint.policy.config import Config
from gpustack.lint.registry import Rule
from gpustack.lint.report.model import Report

TODAY = date(2026, 6, 1)


def latest_image(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    for container in pod.containers():
        if container.image.endswith(":latest"):
            yield Hit(pod.resource, (*container.path, "image"), f"{pod.resource.ref}: {container.name} runs :latest")


def unnamed(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
    if resource.ref.name is None:
        yield Hit(resource, ("metadata",), f"{resource.ref} has no name", severity=Severity.ERROR, fix="Name it.")


def two_services(ctx: LintContext) -> Iterator[Hit]:
    services = [resource for resource in ctx.resources if resource.kind == "Service"]
    for service in services[1:]:
        yield Hit(service, ("kind",), f"{service.ref}: more than one Service in the set")


TEST_RULES: Mapping[str, Rule] = {
    "GS900": Rule("GS900", "pod", latest_image),
    "GS901": Rule("GS901", "object", unnamed, frozenset({"ConfigMap", "Secret"})),
    "GS902": Rule("GS902", "set", two_services),
}
TEST_CATALOGUE: Mapping[str, RuleInfo] = {
    "GS900": RuleInfo(
        "GS900", "latest-image", Severity.WARNING, "pod", "Images on :latest.", "Unpinned.", "Pin the image.",
        fires=(Example("latest", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: 'x:latest'}]\n"),),
        clean=(Example("pinned", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: 'x:1'}]\n"),),
    ),
    "GS901": RuleInfo("GS901", "unnamed-config", Severity.WARNING, "object", "No name.", "Why.", "Name it."),
    "GS902": RuleInfo("GS902", "two-services", Severity.INFO, "set", "Two Services.", "Why.", "Merge them.", security=True),
}


def run(*files: tuple[str, str], config: Config = Config(), partial: bool = False) -> Report:
    """Lint in-memory files ``(name, text)`` with the test rules."""
    loaded = LoadResult.merge(load_text(name, dedent(text)) for name, text in files)
    return lint(loaded, config, partial=partial, today=TODAY, rules=TEST_RULES, catalogue=TEST_CATALOGUE)


class FixedDate(date):
    @classmethod
    def today(cls) -> date:
        return TODAY


def gpustack(capsys: pytest.CaptureFixture[str], *args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    """Run the CLI in-process: (exit code, standard output, standard error)."""
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    else:
        code = 0
    finally:
        sys.stdin = sys.__stdin__
    out, err = capsys.readouterr()
    return code, out, err


def write(name: str, text: str) -> str:
    """Write a file (and its folders) relative to the working folder; its name back."""
    Path(name).parent.mkdir(parents=True, exist_ok=True)
    Path(name).write_text(text)
    return name


def json_report(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """``gpustack lint --format json ARGS``'s output; exit 0 or 1 (findings) asserted."""
    code, out, err = gpustack(capsys, "lint", "--format", "json", *args)
    assert code in (0, 1), err
    return out


def load_paths(
    paths: Iterable[str],
    *,
    excluded: Callable[[str], bool] = lambda path: False,
    stdin: BinaryIO | None = None,
    jobs: int | None = None,
    cache: DocumentCache | None = None,
) -> LoadResult:
    """Read every path (``-`` is standard input); folders are searched recursively.

    ``excluded`` filters files and folders by path (config ``exclude``); a file named
    explicitly is read whatever its suffix. ``jobs``: processes to parse many files with
    (default: ``GPUSTACK_JOBS``, else every idle CPU for large inputs, see ``load_inputs``).
    """
    return load_inputs(read_inputs(paths, excluded=excluded, stdin=stdin), jobs=jobs, cache=cache)


def with_precise_positions(loaded: LoadResult) -> LoadResult:
    """The same resources located by the precise path (``Source.locate``, which composes each
    file again) instead of the positions recorded while reading: the reference that tests
    hold the fast path to."""
    sources = {name: Source(name, text) for name, text in loaded.texts.items()}
    resources = tuple(
        replace(resource, locator=partial(sources[resource.file].locate, resource.document, resource.document_path))
        for resource in loaded.resources
    )
    return LoadResult(resources, loaded.errors, loaded.texts)


def write_tree(folder: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (path relative to ``folder`` -> text) under ``folder``; return it."""
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder
