"""``gpustack lint``, ``gpustack rules`` and ``gpustack explain``.

Imports stay inside the functions: a pre-commit run pays only for the linter (no cdk8s, no
Node, no pydantic, no jsonschema).

No ``from __future__ import annotations`` here: typer reads the commands' annotations, and
evaluating a hundred of them from strings costs a one-file lint 10 ms.
"""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from gpustack.commands.options import ColorOption

if TYPE_CHECKING:
    from collections.abc import Iterable

    from gpustack.lint.input.discover import Inputs
    from gpustack.lint.policy.config import Config

Format = Literal["text", "json", "sarif", "github"]
Level = Literal["error", "warning", "info"]
Distribution = Literal["k3s", "rke2", "k0s", "kubeadm", "talos", "microk8s", "gke", "eks", "aks", "openshift", "generic"]


def lint(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="Files and folders (searched recursively for *.yaml, *.yml, *.json); - reads standard "
            "input, e.g. piped `helm template`. Default: the current folder.",
            metavar="PATH...",
            show_default=False,
        ),
    ] = None,
    output_format: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = "text",
    fail_on: Annotated[
        Level | None,
        typer.Option(
            "--fail-on", help="Exit 1 on findings of this severity or above (config failOn; default warning).",
            show_default=False,
        ),
    ] = None,
    distribution: Annotated[
        Distribution | None,
        typer.Option(
            "--distribution",
            help="The cluster's Kubernetes distribution, context for rules such as GS004 (config distribution).",
            show_default=False,
        ),
    ] = None,
    spec: Annotated[
        Path | None,
        typer.Option(
            "--spec",
            metavar="FILE",
            help="The stack's spec (GpuStack): cluster context for the rules that need it, such as GS005 "
            "capacity, GS013 feature gates, GS024/GS026-GS028 node pools (config spec).",
            show_default=False,
        ),
    ] = None,
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config", metavar="FILE",
            help="Settings file (default: .gpustack.yaml in the linted paths' folder or a folder above).",
            show_default=False,
        ),
    ] = None,
    no_suppressions: Annotated[
        bool,
        typer.Option(
            "--no-suppressions",
            help="Audit: gpustack.io/ignore annotations and comments, config exemptions and the baseline hide nothing.",
        ),
    ] = False,
    show_suppressed: Annotated[bool, typer.Option("--show-suppressed", help="List suppressed findings too.")] = False,
    fail_if_no_objects: Annotated[
        bool,
        typer.Option("--fail-if-no-objects", help="Exit 2 when the input holds no Kubernetes object (a failed pipe)."),
    ] = False,
    partial: Annotated[
        bool,
        typer.Option(
            "--partial", help="The input is not the whole set: skip set-level rules (GS009, GS012, …) with a note."
        ),
    ] = False,
    kubernetes_version: Annotated[
        str | None,
        typer.Option(
            "--kubernetes-version", metavar="1.N",
            help="The cluster's Kubernetes version, context for GS033 and GS034 (else the spec or a cluster config in the set).",
            show_default=False,
        ),
    ] = None,
    chart_values: Annotated[
        list[Path] | None,
        typer.Option(
            "--chart-values", metavar="DIR",
            help="A chart folder or packaged .tgz whose values keys GS031 checks releases of that chart against (repeatable).",
            show_default=False,
        ),
    ] = None,
    select: Annotated[
        list[str] | None,
        typer.Option(
            "--select", metavar="IDS", help="Run only these rules, e.g. GS001,GS004 (repeatable; config select).",
            show_default=False,
        ),
    ] = None,
    ignore: Annotated[
        list[str] | None,
        typer.Option(
            "--ignore", metavar="IDS", help="Do not run these rules, e.g. GS023 (repeatable; config ignore).",
            show_default=False,
        ),
    ] = None,
    severity: Annotated[
        list[str] | None,
        typer.Option(
            "--severity", metavar="RULE=LEVEL",
            help="Report a rule at this severity, e.g. GS004=info (repeatable; config rules).", show_default=False,
        ),
    ] = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline", metavar="FILE",
            help="Report only findings not recorded in this baseline (config baseline).", show_default=False,
        ),
    ] = None,
    write_baseline: Annotated[
        Path | None,
        typer.Option(
            "--write-baseline", metavar="FILE",
            help="Record the findings in this baseline file and exit 0 (unless input is unreadable).",
            show_default=False,
        ),
    ] = None,
    docs_url: Annotated[
        str | None,
        typer.Option(
            "--docs-url", metavar="URL", envvar="GPUSTACK_DOCS_URL",
            help="Base URL that SARIF helpUri links resolve docs/rules.md against (default: the project's).",
            show_default=False,
        ),
    ] = None,
    fix: Annotated[
        bool,
        typer.Option(
            "--fix",
            help="Apply the safe fixes in place (standard input: print the fixed stream; the report goes to "
            "standard error), then report what remains.",
        ),
    ] = False,
    diff: Annotated[
        bool, typer.Option("--diff", help="Print what --fix would change as a unified diff; change nothing.")
    ] = False,
    set_roots: Annotated[
        list[Path] | None,
        typer.Option(
            "--set-root", metavar="DIR",
            help="A folder linted apart as a whole set, like a git repository in the input (repeatable; config roots).",
            show_default=False,
        ),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the cache of earlier runs.")
    ] = False,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir", metavar="DIR",
            help="Where the cache of earlier runs goes (GPUSTACK_CACHE_DIR; default: .gpustack_cache beside the "
            "config, else in the linted paths' folder).",
            show_default=False,
        ),
    ] = None,
    color: ColorOption = None,
) -> None:
    # The help keeps the docstring's line breaks: one line per paragraph.
    """Lint Kubernetes manifests for GPU pitfalls.

    Exit codes: 0 nothing at or above --fail-on; 1 findings at or above it, or an unreadable file; 2 usage, a bad config, or nothing readable at all.

    Suppress a finding with the annotation gpustack.io/ignore: "GS004: reason; until 2027-03-31" on the object or pod template, or a comment # gpustack:ignore GS004 on or above its line.

    Adopting it on an existing repository: --write-baseline FILE records today's findings, --baseline FILE then reports only new ones.

    --fix exits by what remains after fixing; --diff by the files as they are.

    A second run on the same files reads what the first one found from the cache (keyed by each file's content, the settings and gpustack's version); --no-cache skips it.
    """
    if fix and diff:
        raise typer.BadParameter("--fix and --diff exclude each other")
    if write_baseline and (fix or diff):
        raise typer.BadParameter("--write-baseline records findings; it does not go with --fix or --diff")
    import gc

    # A run builds millions of objects that live until exit and holds no cycles: the cyclic
    # collector would only walk the growing heap again and again (5x the time for 10,000
    # documents), and the imports below alone would pay for a dozen collections.
    gc.disable()
    from gpustack.lint.input import workers

    workers.look_early()
    from dataclasses import replace

    from gpustack.lint.catalogue import load_catalogue
    from gpustack.lint.input.cache import Cache, cache_folder
    from gpustack.lint.input.discover import read_inputs
    from gpustack.lint.input.roots import repositories
    from gpustack.lint.model import Severity
    from gpustack.lint.policy.config import find_config, load_config, search_start
    from gpustack.lint.policy.selection import Choice, rule_ids, severities
    from gpustack.lint.report import ReportOptions
    from gpustack.terminal import use_color

    catalogue = load_catalogue()
    paths = paths or ["."]
    config = load_config(config_file or find_config(search_start(paths)), known_rules=catalogue)
    config = replace(
        config,
        distribution=distribution or config.distribution,
        spec=spec or config.spec,
        fail_on=Severity.parse(fail_on) if fail_on else config.fail_on,
        suppressions=config.suppressions and not no_suppressions,
        kubernetes_version=kubernetes_version,
        chart_values=tuple(chart_values or ()),
        selection=config.selection.before(
            Choice(
                rule_ids(select, catalogue, "--select") if select else None,
                rule_ids(ignore or (), catalogue, "--ignore"),
            )
        ),
        severities={**config.severities, **severities(severity or (), catalogue)},
        baseline=None if write_baseline else baseline or config.baseline,
        roots=(*config.roots, *_folders(set_roots or (), "--set-root")),
    )
    cache = None if no_cache else Cache(cache_folder(cache_dir, config.path, search_start(paths)))
    inputs = read_inputs(paths, excluded=config.excluded)
    # --fix and --diff edit by the findings' positions: always from documents parsed from
    # these very bytes (the document cache is keyed by content), never from a stored report.
    # Which git repositories hold the files decides the roots (roots.py), hence the findings.
    settings = (
        None
        if cache is None or fix or diff
        else cache.settings_key((config, partial, repositories(_names(inputs))), _named_files(config))
    )
    key = None if cache is None or settings is None else cache.report_key(inputs, settings)
    # Without --fix or --diff the report goes to standard output; a run that printed it the
    # same way before (same report key, format and options) prints what it printed.
    options = ReportOptions(
        color=output_format == "text" and use_color(sys.stdout, color),
        show_suppressed=show_suppressed,
        docs_url=docs_url,
    )
    shown = None
    if cache is not None and key is not None and not write_baseline:
        shown = cache.output_key(key, output_format, options, fail_if_no_objects)
        printed = cache.get_output(shown)
        if printed is not None:
            sys.stdout.write(printed[0])
            raise typer.Exit(printed[1])
    from gpustack.lint.engine import Run
    from gpustack.lint.engine import lint as run_lint
    from gpustack.lint.input.load import load_inputs
    from gpustack.lint.report import reporter

    run = Run(config, partial=partial, catalogue=catalogue, cache=cache)
    loaded = load_inputs(inputs, cache=cache, work=run)
    units = cache.units(settings, inputs) if cache is not None and settings is not None else None
    report = run_lint(loaded, units=units, run=run)
    output = None  # what standard output carries instead of the report: a diff, fixed YAML
    if fix or diff:
        from gpustack.lint.fix import autofix

        fixed = autofix(
            loaded, report, lambda again: run_lint(again, run=run), write=fix
        )
        report, output = fixed.report, fixed.output
        sys.stderr.write(fixed.summary)
    stream = sys.stdout if output is None else sys.stderr
    if stream is not sys.stdout:
        options = replace(options, color=output_format == "text" and use_color(stream, color))
    sys.stdout.write(output or "")
    text = reporter(output_format).render(report, options)
    stream.write(text)
    if write_baseline:
        from gpustack.lint.policy.baseline import write

        write(str(write_baseline), report.findings)
        sys.stderr.write(f"gpustack: recorded {len(report.findings)} finding(s) in {write_baseline}\n")
        report = replace(report, findings=())  # accepted: only unreadable input fails the run
    code = report.exit_code(config.fail_on, fail_if_no_objects=fail_if_no_objects)
    if cache is not None:
        if shown is not None:
            cache.put_output(shown, text, code)
        cache.close()
    from gpustack.shutdown import skip_teardown

    skip_teardown()  # everything is written and closed: the process may end at once
    raise typer.Exit(code)


def _folders(paths: "Iterable[Path]", option: str) -> list[Path]:
    """The folders an option names; one that is not a folder is a usage error."""
    for path in paths:
        if not path.is_dir():
            raise typer.BadParameter(f"{option} {path}: no such folder")
    return list(paths)


def _names(inputs: "Inputs") -> list[str]:
    """The names of the files read."""
    return [item[0] for item in inputs if isinstance(item, tuple)]


def _named_files(config: "Config") -> list[Path]:
    """The files the settings name, whose content the findings depend on."""
    return [path for path in (config.spec, config.baseline, *config.chart_values) if path is not None]


def rules(
    output_format: Annotated[
        Literal["table", "markdown"],
        typer.Option("--format", "-f", help="table, or markdown: the page docs/rules.md is generated as."),
    ] = "table",
) -> None:
    """List the rule catalogue: id, name, default severity, scope, autofix, summary."""
    from gpustack.lint.catalogue import load_catalogue
    from gpustack.lint.rule_docs import catalogue_markdown, catalogue_table

    catalogue = load_catalogue()
    render = catalogue_markdown if output_format == "markdown" else catalogue_table
    sys.stdout.write(render(catalogue))


def explain(
    rule: Annotated[
        str, typer.Argument(help="A rule id or name, e.g. GS001 or pci-0300-selector.", metavar="RULE")
    ],
) -> None:
    """Explain one rule: why it matters, how to fix it, examples that fire and stay quiet."""
    from gpustack.lint.catalogue import find_rule, load_catalogue
    from gpustack.lint.rule_docs import rule_markdown

    sys.stdout.write(rule_markdown(find_rule(load_catalogue(), rule), level=1))
