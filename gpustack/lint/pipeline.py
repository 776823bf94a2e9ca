"""``gpustack lint`` from its parsed options to its exit status, in six steps (``run``):

1. settings: the config file, with the command line over it (``_config``);
2. input: the bytes of every file the paths name (``input.discover``);
3. keys: the cache's keys of the settings, the report and the printed output; a run that
   printed this very report the same way before prints it again and ends here (``_keys``);
4. engine: the files parsed, each file's unit made as it is parsed, the rules over the set
   (``input.load``, ``engine``);
5. fix: ``--fix`` writes the safe fixes, ``--diff`` shows them (``_fixed``);
6. report: rendered, the baseline written, the output kept in the cache (``_reported``).

The command (``gpustack.commands.lint``) only parses the options into ``Options``. Imports
stay inside the functions, in the order the steps need them: a run that prints a stored report
never loads the engine, and no run loads cdk8s or pydantic without --spec.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from gpustack.lint.catalogue import RuleInfo
    from gpustack.lint.engine import Run
    from gpustack.lint.input.cache import Cache
    from gpustack.lint.input.discover import Inputs
    from gpustack.lint.input.load import LoadResult
    from gpustack.lint.live.session import Live
    from gpustack.lint.policy.config import Config
    from gpustack.lint.report import ReportOptions
    from gpustack.lint.report.model import Report


@dataclass(frozen=True)
class Options:
    """The command line of ``gpustack lint``, as typer parsed it (``--help`` says what each means)."""

    paths: list[str] | None = None
    output_format: str = "text"
    fail_on: str | None = None
    distribution: str | None = None
    spec: Path | None = None
    config_file: Path | None = None
    no_suppressions: bool = False
    show_suppressed: bool = False
    show_info: bool = False
    fail_if_no_objects: bool = False
    partial: bool = False
    kubernetes_version: str | None = None
    chart_values: list[Path] | None = None
    values_of: str | None = None
    select: list[str] | None = None
    ignore: list[str] | None = None
    severity: list[str] | None = None
    baseline: Path | None = None
    write_baseline: Path | None = None
    docs_url: str | None = None
    fix: bool = False
    diff: bool = False
    set_roots: list[Path] | None = None
    no_cache: bool = False
    cache_dir: Path | None = None
    color: bool | None = None
    kubeconfig: Path | None = None
    context: str | None = None
    request_timeout: float | None = None
    cluster: bool = False
    print_rbac: bool = False

    @property
    def live(self) -> bool:
        """Whether the run reads a live cluster (gpustack.lint.live)."""
        return bool(self.kubeconfig or self.context or self.cluster)


class UsageError(Exception):
    """An option the command line got wrong: the command reports it as a bad parameter."""


class Keys(NamedTuple):
    """The run's cache keys (None: not cached; --fix and --diff never read a stored report)."""

    settings: str | None = None
    report: str | None = None
    output: str | None = None


def run(options: Options) -> int:
    """Lint what ``options`` name, print the report, and give the exit status."""
    if options.print_rbac:
        from gpustack.lint.live.rbac import manifests

        sys.stdout.write(manifests())
        return 0
    import gc

    # A run builds millions of objects that live until exit and holds no cycles: the cyclic
    # collector would only walk the growing heap again and again (5x the time for 10,000
    # documents), and the imports below alone would pay for a dozen collections.
    gc.disable()
    from gpustack.lint.input import workers

    workers.look_early()
    from gpustack.lint.catalogue import load_catalogue
    from gpustack.lint.input.cache import Cache, cache_folder
    from gpustack.lint.input.discover import read_inputs
    from gpustack.lint.model import Severity
    from gpustack.lint.policy.config import search_start
    from gpustack.lint.report import ReportOptions
    from gpustack.terminal import use_color

    catalogue = load_catalogue()
    paths = options.paths or ["."]
    start = search_start(paths)  # where the config is searched for and the default cache is keyed
    config = _config(options, start, catalogue)
    live = _live(options, config)
    # A live cluster changes under the same settings: nothing of such a run is cached.
    folder = None if options.no_cache or live else cache_folder(options.cache_dir, config.cache_dir, start)
    cache = None if folder is None else Cache(folder)
    inputs = [live.workloads] if live and live.workloads else read_inputs(paths, excluded=config.excluded)
    # Without --fix or --diff the report goes to standard output; a run that printed it the
    # same way before (same report key, format and options) prints what it printed.
    shown = ReportOptions(
        color=options.output_format == "text" and use_color(sys.stdout, options.color),
        show_suppressed=options.show_suppressed,
        docs_url=options.docs_url,
        show_info=options.show_info or config.show_info or config.fail_on == Severity.INFO,
        live=options.cluster,
    )
    keys = _keys(options, config, cache, inputs, shown)
    printed = cache.get_output(keys.output) if cache is not None and keys.output is not None else None
    if printed is not None:
        sys.stdout.write(printed[0])
        return printed[1]
    from gpustack.lint.engine import Run, lint
    from gpustack.lint.input.load import load_inputs

    facts = live.facts if live else None  # else the config's spec's, if any (Run reads it)
    engine_run = Run(config, partial=options.partial, catalogue=catalogue, cache=cache, cluster=facts)
    loaded = load_inputs(inputs, cache=cache, work=engine_run)
    units = cache.units(keys.settings, inputs) if cache is not None and keys.settings is not None else None
    report = lint(loaded, units=units, run=engine_run)
    if live:
        report = replace(report, notes=report.notes + live.notes)
    report, output = _fixed(options, loaded, report, engine_run)
    return _reported(options, config, report, output, shown, cache, keys)


def _config(options: Options, start: Path, catalogue: Mapping[str, RuleInfo]) -> Config:
    """The config file (``--config``, else the one found above ``start``, where the search for
    it starts) with the command line over it."""
    from gpustack.lint.model import Severity
    from gpustack.lint.policy.config import find_config, load_config
    from gpustack.lint.policy.selection import Choice, rule_ids, severities

    config = load_config(options.config_file or find_config(start), known_rules=catalogue)
    return replace(
        config,
        distribution=options.distribution or config.distribution,
        spec=options.spec or config.spec,
        tree=start,
        fail_on=Severity.parse(options.fail_on) if options.fail_on else config.fail_on,
        suppressions=config.suppressions and not options.no_suppressions,
        kubernetes_version=options.kubernetes_version,
        chart_values=tuple(options.chart_values or ()),
        values_of=_chart_reference(options.values_of),
        selection=config.selection.before(
            Choice(
                rule_ids(options.select, catalogue, "--select") if options.select else None,
                rule_ids(options.ignore or (), catalogue, "--ignore"),
            )
        ),
        severities={**config.severities, **severities(options.severity or (), catalogue)},
        baseline=None if options.write_baseline else options.baseline or config.baseline,
        roots=(*config.roots, *_folders(options.set_roots or (), "--set-root")),
    )


def _live(options: Options, config: Config) -> Live | None:
    """The live cluster the options name, combined with the config's spec; None without one."""
    if not options.live:
        return None
    if options.cluster and options.paths:
        raise UsageError("--cluster lints the cluster's running workloads: give it no PATH (--kubeconfig "
                         "alone lints files with the cluster as context)")
    if options.cluster and (options.fix or options.diff):
        raise UsageError("--fix and --diff edit files; the cluster's workloads are no files")
    if options.request_timeout is not None and options.request_timeout <= 0:
        raise UsageError("--request-timeout must be a number of seconds above 0")
    from gpustack.lint.live.session import read_live

    kubeconfig = str(options.kubeconfig) if options.kubeconfig else None
    return read_live(
        kubeconfig, options.context, config.cluster(), workloads=options.cluster, timeout=options.request_timeout
    )


def _chart_reference(text: str | None) -> str | None:
    """``--chart NAME[@VERSION]`` as written, or a usage error."""
    if text is None:
        return None
    name, _, version = text.partition("@")
    if not name.strip() or (not version.strip() and "@" in text) or any(char.isspace() for char in text):
        raise UsageError(f"--chart {text!r}: give a chart name, optionally with @VERSION (nvidia-device-plugin@0.17.1)")
    return text


def _folders(paths: Iterable[Path], option: str) -> list[Path]:
    """The folders an option names; one that is not a folder is a usage error."""
    for path in paths:
        if not path.is_dir():
            raise UsageError(f"{option} {path}: no such folder")
    return list(paths)


def _keys(options: Options, config: Config, cache: Cache | None, inputs: Inputs, shown: ReportOptions) -> Keys:
    """The cache's keys of the settings, the report and the output printed as ``shown``.

    --fix and --diff edit by the findings' positions: always from documents parsed from
    these very bytes (the document cache is keyed by content), never from a stored report.
    Which git repositories and stacks hold the files decides the roots (roots.py), hence the findings.
    --write-baseline writes a file: its output is never printed from the cache."""
    from gpustack.lint.input.roots import repositories, stacks
    from gpustack.lint.policy.config import FILENAME

    if cache is None or options.fix or options.diff:
        return Keys()
    names = [item[0] for item in inputs if isinstance(item, tuple)]
    from gpustack.lint.input.declaration_files import declaration_files

    named_files = [path for path in (config.spec, config.baseline, *config.chart_values) if path is not None]
    named_files += [Path(path) for path in declaration_files(config.tree)]  # they may name a values file's chart
    separate = stacks(names, FILENAME, str(config.path) if config.path else None)
    settings = cache.settings_key((config, options.partial, repositories(names), separate), named_files)
    report = cache.report_key(inputs, settings)
    if options.write_baseline:
        return Keys(settings, report)
    return Keys(settings, report, cache.output_key(report, options.output_format, shown, options.fail_if_no_objects))


def _fixed(options: Options, loaded: LoadResult, report: Report, engine_run: Run) -> tuple[Report, str | None]:
    """The report after --fix (what remains) or --diff (the input as it is), and what standard
    output carries instead of the report: the diff, or the fixed standard input."""
    if not (options.fix or options.diff):
        return report, None
    from gpustack.lint.engine import lint
    from gpustack.lint.fix import autofix

    fixed = autofix(loaded, report, lambda again: lint(again, run=engine_run), write=options.fix)
    sys.stderr.write(fixed.summary)
    return fixed.report, fixed.output


def _reported(
    options: Options,
    config: Config,
    report: Report,
    output: str | None,
    shown: ReportOptions,
    cache: Cache | None,
    keys: Keys,
) -> int:
    """Print ``output`` and the report (to standard error when ``output`` takes standard
    output), record the baseline, keep the printed output in the cache and close it; the exit
    status."""
    from gpustack.lint.report import reporter
    from gpustack.terminal import use_color

    stream = sys.stdout if output is None else sys.stderr
    if stream is not sys.stdout:
        shown = replace(shown, color=options.output_format == "text" and use_color(stream, options.color))
    sys.stdout.write(output or "")
    text = reporter(options.output_format).render(report, shown)
    stream.write(text)
    if options.write_baseline:
        from gpustack.lint.policy.baseline import write

        write(str(options.write_baseline), report.findings)
        sys.stderr.write(f"gpustack: recorded {len(report.findings)} finding(s) in {options.write_baseline}\n")
        report = replace(report, findings=())  # accepted: only unreadable input fails the run
    code = report.exit_code(config.fail_on, fail_if_no_objects=options.fail_if_no_objects)
    if cache is not None:
        if keys.output is not None:
            cache.put_output(keys.output, text, code)
        cache.close()
    from gpustack.shutdown import skip_teardown

    skip_teardown()  # everything is written and closed: the process may end at once
    return code
