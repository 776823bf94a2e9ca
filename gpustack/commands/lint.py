"""``gpustack lint``, ``gpustack rules`` and ``gpustack explain``.

Imports stay inside the functions (the distributions' names excepted, one tuple the
``--distribution`` option lists): a pre-commit run pays only for the linter (no cdk8s, no
Node, no pydantic, no jsonschema). The run itself is ``gpustack.lint.pipeline``'s.

No ``from __future__ import annotations`` here: typer reads the commands' annotations, and
evaluating a hundred of them from strings costs a one-file lint 10 ms.
"""

import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from gpustack.commands.options import ColorOption
from gpustack.lint.distributions import DISTRIBUTIONS

Format = Literal["text", "json", "sarif", "github"]
Level = Literal["error", "warning", "info"]
Distribution = Literal[DISTRIBUTIONS]  # type: ignore[valid-type]  # Literal["k3s", "rke2", …]: one list of names


def _optional(kind: Any, flag: str, metavar: str, help_text: str, **settings: Any) -> Any:
    """An option that takes a value (``metavar``) and defaults to none; ``kind`` a list: repeatable."""
    return Annotated[kind | None, typer.Option(flag, metavar=metavar, help=help_text, show_default=False, **settings)]


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
    spec: _optional(
        Path, "--spec", "FILE",
        "The stack's spec (GpuStack): cluster context for the rules that need it, such as GS005 "
        "capacity, GS013 feature gates, GS024/GS026-GS028 node pools (config spec).",
    ) = None,
    config_file: _optional(
        Path, "--config", "FILE",
        "Settings file (default: .gpustack.yaml in the linted paths' folder or a folder above).",
    ) = None,
    no_suppressions: Annotated[
        bool,
        typer.Option(
            "--no-suppressions",
            help="Audit: gpustack.io/ignore annotations and comments, config exemptions and the baseline hide nothing.",
        ),
    ] = False,
    show_suppressed: Annotated[bool, typer.Option("--show-suppressed", help="List suppressed findings too.")] = False,
    show_info: Annotated[
        bool,
        typer.Option(
            "--show-info",
            help="List info findings too in text and github output (config showInfo; JSON and SARIF always do).",
        ),
    ] = False,
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
    kubernetes_version: _optional(
        str, "--kubernetes-version", "1.N",
        "The cluster's Kubernetes version, context for GS033 and GS034 (else the spec or a cluster config in the set).",
    ) = None,
    chart_values: _optional(
        list[Path], "--chart-values", "DIR",
        "A chart folder or packaged .tgz whose values keys GS031 checks releases of that chart against (repeatable).",
    ) = None,
    values_of: _optional(
        str, "--chart", "NAME[@VERSION]",
        "The chart whose values the input's plain values files are (as with helm -f), e.g."
        " nvidia-device-plugin@0.17.1: files that hold no Kubernetes objects are checked as its values.",
    ) = None,
    select: _optional(
        list[str], "--select", "IDS", "Run only these rules, e.g. GS001,GS004 (repeatable; config select)."
    ) = None,
    ignore: _optional(list[str], "--ignore", "IDS", "Do not run these rules, e.g. GS023 (repeatable; config ignore).") = None,
    severity: _optional(
        list[str], "--severity", "RULE=LEVEL", "Report a rule at this severity, e.g. GS004=info (repeatable; config rules)."
    ) = None,
    baseline: _optional(
        Path, "--baseline", "FILE", "Report only findings not recorded in this baseline (config baseline)."
    ) = None,
    write_baseline: _optional(
        Path, "--write-baseline", "FILE",
        "Record the findings in this baseline file and exit 0 (unless input is unreadable).",
    ) = None,
    docs_url: _optional(
        str, "--docs-url", "URL",
        "Base URL that SARIF helpUri links resolve each rule's page (docs/rules/GSNNN.md) against, e.g. your clone's "
        "https://github.com/<owner>/<repo>/blob/<ref>/ (none by default: SARIF rules then carry no helpUri; "
        "the GitHub Action passes its own repository).",
        envvar="GPUSTACK_DOCS_URL",
    ) = None,
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
    set_roots: _optional(
        list[Path], "--set-root", "DIR",
        "A folder linted apart as a whole set, like a git repository in the input (repeatable; config roots).",
    ) = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the cache of earlier runs.")
    ] = False,
    cache_dir: _optional(
        Path, "--cache-dir", "DIR",
        "Where the cache of earlier runs goes (GPUSTACK_CACHE_DIR, else the config's cacheDir; default: "
        "gpustack/lint/<project digest> in $XDG_CACHE_HOME or ~/.cache, outside the linted tree).",
    ) = None,
    kubeconfig: _optional(
        Path, "--kubeconfig", "FILE",
        "Read a live cluster (list-only) as context for the cluster-aware rules, with --spec if given: the "
        "spec for what is planned, the cluster for what is there, differences as notes. Needs the cluster extra.",
    ) = None,
    context: _optional(str, "--context", "NAME", "The kubeconfig context to read (default: its current one).") = None,
    request_timeout: _optional(
        float, "--request-timeout", "SECONDS", "How long each request to the cluster may wait for its answer (default 10)."
    ) = None,
    cluster: Annotated[
        bool,
        typer.Option(
            "--cluster",
            help="Lint the workloads running in the cluster (--kubeconfig, else $KUBECONFIG or ~/.kube/config): "
            "findings at Kind/namespace/name.",
        ),
    ] = False,
    print_rbac: Annotated[
        bool,
        typer.Option("--print-rbac", help="Print the ClusterRole and binding that --kubeconfig and --cluster need, and exit."),
    ] = False,
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
    from gpustack.lint.pipeline import Options, UsageError, run

    options = Options(
        paths=paths, output_format=output_format, fail_on=fail_on, distribution=distribution, spec=spec,
        config_file=config_file, no_suppressions=no_suppressions, show_suppressed=show_suppressed, show_info=show_info,
        fail_if_no_objects=fail_if_no_objects, partial=partial, kubernetes_version=kubernetes_version,
        chart_values=chart_values, values_of=values_of, select=select, ignore=ignore, severity=severity, baseline=baseline,
        write_baseline=write_baseline, docs_url=docs_url, fix=fix, diff=diff, set_roots=set_roots,
        no_cache=no_cache, cache_dir=cache_dir, color=color, kubeconfig=kubeconfig, context=context,
        cluster=cluster, print_rbac=print_rbac, request_timeout=request_timeout,
    )
    try:
        code = run(options)
    except UsageError as exc:
        raise typer.BadParameter(str(exc)) from None
    raise typer.Exit(code)


def rules() -> None:
    """List the rule catalogue: id, name, default severity, scope, autofix, summary."""
    from gpustack.lint.catalogue import load_catalogue
    from gpustack.lint.rule_docs import catalogue_table

    sys.stdout.write(catalogue_table(load_catalogue()))


def explain(
    rule: Annotated[
        str, typer.Argument(help="A rule id or name, e.g. GS001 or pci-0300-selector.", metavar="RULE")
    ],
    docs_url: _optional(
        str, "--docs-url", "URL",
        "Base URL the rule's page (docs/rules/GSNNN.md) is given below, as with lint's --docs-url "
        "(none by default: its path in gpustack's repository).",
        envvar="GPUSTACK_DOCS_URL",
    ) = None,
) -> None:
    """Explain one rule: why it matters, how to fix it, examples that fire and stay quiet, and its page."""
    from gpustack.lint.catalogue import find_rule, load_catalogue
    from gpustack.lint.rule_docs import rule_markdown
    from gpustack.site_pages import page_url

    info = find_rule(load_catalogue(), rule)
    sys.stdout.write(f"{rule_markdown(info, level=1)}\nPage: {page_url(info, docs_url)}\n")
