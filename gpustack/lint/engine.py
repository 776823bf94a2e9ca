"""The engine: run every enabled rule over what it declares, then apply policy in one place.

Rules never search: pod rules get each pod spec, object rules each object of their kinds,
set rules the whole set once (skipped with a note on ``--partial`` input, which is not the
whole set). The set is a root's (``roots.py``): every rule runs over one root's objects at
a time, so that nothing one repository or cluster holds changes another's findings. A Hit
becomes a Finding here: severity is the catalogue's default, replaced by the rule's own when
it knows the context better (``Hit.severity``), replaced by the user's config above all; the
position comes from ``Resource.locate``; the fix hint is the hit's or the catalogue's
remediation. Suppressions (annotations, comments, config exemptions, the
baseline) are applied by ``suppress.apply`` and nowhere else.

File-local rules (``Rule.file_local``: pod and object rules that read nothing but their
target's file, the settings and at most one fact of the set) run one file at a time, with a
context holding that file alone, so that what they find in a file is the file's own. A file's
unit (its pod specs and those findings) is made by the process that parsed it (``Run``, asked
by the loader), kept per file by a ``FileUnits`` store (the lint cache), or made by ``Files``
(``input/units.py``); a run with one file changed makes that file's alone. The rest (set rules, rules that read the set,
chart values, pod specs built from chart values) run over each root's whole set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import date
from functools import partial
from typing import TYPE_CHECKING, Any

from gpustack.errors import GpustackError
from gpustack.lint.catalogue import RuleInfo
from gpustack.lint.charts import chartversions
from gpustack.lint.context import LintContext
from gpustack.lint.facts.hostscripts import is_host_script
from gpustack.lint.input.load import LoadResult
from gpustack.lint.input.fluxsubst import substituted
from gpustack.lint.input.overlaid import base_path, found_at, overlaid
from gpustack.lint.input.roots import Root, repositories, split, stacks, stacks_note
from gpustack.lint.input.units import Files, FileUnits, Results, Unit, pod_specs
from gpustack.lint.model import (
    FINDING_ORDER,
    Edit,
    Finding,
    Hit,
    InputError,
    Note,
    PodSpec,
    Resource,
    Severity,
    copied,
    resources_by_file,
)
from gpustack.lint.policy import suppress
from gpustack.lint.policy.config import FILENAME, Config
from gpustack.lint import unread
from gpustack.lint.registry import Deferred, Rule
from gpustack.lint.releases import deployed, dispatch, outside
from gpustack.lint.report.model import Report
from gpustack.lint.targets import Targets

if TYPE_CHECKING:
    from gpustack.lint.facts.claims import ClaimIndex
    from gpustack.lint.facts.pools import ClusterFacts
    from gpustack.lint.input.cache import Cache


def lint(
    loaded: LoadResult,
    config: Config = Config(),
    *,
    partial: bool = False,
    today: date | None = None,
    rules: Mapping[str, Rule | Deferred] | None = None,
    catalogue: Mapping[str, RuleInfo] | None = None,
    units: FileUnits | None = None,
    jobs: int | None = None,
    run: Run | None = None,
) -> Report:
    """Lint what was loaded. ``rules`` and ``catalogue`` default to the shipped ones; ``units``
    keeps what file-local rules found in each file (for a run on the same settings only);
    ``jobs``: processes to spread the files' work over (default: ``workers.jobs_for``);
    ``run``: the run's settings as the loader used them (``Run.file_unit``), else made here."""
    run = run or Run(config, partial=partial, rules=rules, catalogue=catalogue)
    config, catalogue, enabled = run.config, run.catalogue, run.enabled
    notes: list[Note] = []
    errors = list(loaded.errors)
    baseline = config.read_baseline()
    if run.partial and any(rule.scope == "set" for rule in enabled):
        skipped = ", ".join(rule.id for rule in enabled if rule.scope == "set")
        notes.append(Note(f"{skipped} skipped: --partial input is not the whole set these rules need"))
    by_file = resources_by_file(loaded.resources)
    values_files, declared = outside.values_files(config, by_file)
    notes += declared
    each = replace(run.each, values_files=values_files, texts=loaded.texts)
    judged_pods: list[PodSpec] = []
    results: list[tuple[Hit, Finding]] = []
    separate = stacks(loaded.texts, FILENAME, str(config.path) if config.path else None)
    notes += stacks_note(separate, FILENAME)
    any_built = False
    roots = split(loaded.resources, (*repositories(loaded.texts), *separate, *map(str, config.roots)))
    files = Files(run, each, loaded.units, units, jobs)
    for root in roots:
        found = files.of(root, errors)
        overlay = substituted(overlaid(root.resources, loaded.texts), loaded.texts)
        built = overlay.built_pods(errors)
        ctx = replace(each, resources=overlay.resources, pod_specs=overlay.pods(pod for file in found for pod in file.pods))
        from_files = len(ctx.pod_specs)
        ctx = _with_value_pods(replace(ctx, pod_specs=ctx.pod_specs + built), errors)
        local, facts, facts_key = run.set_facts(ctx, errors)
        ctx = dispatch.same_releases(ctx, ctx.with_set_facts(facts))
        judged_pods += ctx.pod_specs
        notes += _release_notes(ctx)
        notes += unread.notes(resources_by_file(root.resources), dispatch.releases(ctx)) + list(overlay.notes)
        label, before = root.label, len(results)
        for file, with_facts in zip(found, files.with_facts(found, local, facts, facts_key, errors), strict=True):
            results += [(hit, _in_root(finding, label)) for hit, finding in (*file.results, *with_facts)
                        if overlay.keeps(hit.resource)]
        shared = [rule for rule in enabled if rule not in local]
        own = Targets(ctx.pod_specs[from_files:], overlay.built)  # built and chart-values objects
        results += _root_results(ctx, root, shared, local, config, catalogue, errors, own)
        results[before:], skipped = deployed.lower_not_deployed(ctx, results[before:])
        any_built = any_built or bool(overlay.built)
        notes += skipped
    results = _first_of_each(results)  # from a file two roots or overlays deploy, values Fleet targets share
    if len(roots) > 1 or any_built:
        notes, errors = list(dict.fromkeys(notes)), list(dict.fromkeys(errors))
    outcome = suppress.apply(
        results,
        resources=loaded.resources,
        pod_specs=judged_pods,
        texts=loaded.texts,
        known_rules=catalogue,
        today=today or date.today(),
        audit=not config.suppressions,
        exemptions=config.exemptions,
        baseline=baseline,
    )
    objects = sum(1 for resource in loaded.resources if resource.api_version and resource.kind)
    if objects == 0:
        notes.append(Note(_nothing_to_lint(loaded)))
    return Report(
        findings=tuple(sorted(outcome.findings, key=FINDING_ORDER)),
        suppressed=tuple(sorted(outcome.suppressed, key=lambda item: FINDING_ORDER(item.finding))),
        errors=tuple(errors),
        notes=tuple(notes) + outcome.notes,
        files=loaded.files,
        objects=objects,
        catalogue=catalogue,
        baseline=outcome.baseline,
    )


def _root_results(
    ctx: LintContext,
    root: Root,
    shared: Sequence[Rule | Deferred],
    local: Sequence[Rule | Deferred],
    config: Config,
    catalogue: Mapping[str, RuleInfo],
    errors: list[InputError],
    own: Targets,
) -> list[tuple[Hit, Finding]]:
    """The hits on one root's set that are not any one file's, as findings: the ``shared``
    rules (set rules, rules that read the set) over everything; the file-local rules
    (``local``) over the chart values and what no file holds as it is (``own``: objects
    overlays built, pod specs built from chart values)."""
    everything = Targets(ctx.pod_specs, ctx.resources)
    hits = [
        (rule, hit)
        for rules, targets in ((shared, everything), (local, own))
        for rule in targets.woken(rules)
        for hit in _values_hits(rule, ctx, errors) + _check_hits(rule, ctx, errors, targets)
    ]
    return _findings(_assumed(hits, ctx, catalogue), catalogue, config, root.label)


def _assumed(hits: list[tuple[Rule, Hit]], ctx: LintContext, catalogue: Mapping[str, RuleInfo]) -> list[tuple[Rule, Hit]]:
    """The hits, an error on a values file whose chart its path and keys tell (``releases.inferred``)
    made a warning: that the file is installed, and as that chart, is what the set suggests, not
    what it says."""
    if not any(hit.resource.kind is None for _, hit in hits):  # a values file's hit is on a document of no kind
        return hits
    files = {release.resource.file for release in dispatch.releases(ctx) if release.inferred}
    if not files:
        return hits
    return [
        (rule, replace(hit, severity=Severity.WARNING))
        if hit.resource.file in files and (hit.severity or catalogue[rule.id].severity) == Severity.ERROR
        else (rule, hit)
        for rule, hit in hits
    ]


def _findings(
    hits: list[tuple[Rule, Hit]], catalogue: Mapping[str, RuleInfo], config: Config, root: str | None
) -> list[tuple[Hit, Finding]]:
    # Positions are parsed lazily per file: locate file by file, document by document.
    hits.sort(key=lambda pair: (pair[1].resource.file, pair[1].resource.document))
    return [(hit, _finding(rule, hit, catalogue[rule.id], config, root)) for rule, hit in hits]


def _in_root(finding: Finding, root: str | None) -> Finding:
    """The finding as judged in ``root``: a copy with the root's label (``copied``: not
    ``dataclasses.replace``, which would run ``__init__`` again)."""
    if root is None:
        return finding
    return copied(Finding, {**finding.__dict__, "root": root})


class Run:
    """The settings of one lint run as the rules see them: the config, the catalogue, the
    enabled rules, the context every object is judged in (``each``, before any set), and the
    file-local rules, with a set fact (``factual``) or without (``plain``).

    The loader asks it for each file's unit right after reading the file (``file_unit``), in
    the process that read it: a worker builds on objects it made itself, where a second fork
    after reading would copy the pages of the whole set as it touched them. ``cache`` keeps the
    facts of the spec (``from_spec.load_cluster``)."""

    def __init__(
        self,
        config: Config = Config(),
        *,
        partial: bool = False,
        rules: Mapping[str, Rule | Deferred] | None = None,
        catalogue: Mapping[str, RuleInfo] | None = None,
        cache: Cache | None = None,
        cluster: ClusterFacts | None = None,
    ) -> None:
        """``rules``: by default the shipped ones, some deferred (``rules.listed``);
        ``cluster``: the facts to judge by (a live cluster's, with the spec's: ``live``);
        without it, the config's spec's."""
        if rules is None:
            from gpustack.lint.rules import listed

            rules = listed()
        if catalogue is None:
            from gpustack.lint.catalogue import load_catalogue

            catalogue = load_catalogue()
        missing = sorted(set(rules) - set(catalogue))
        if missing:
            raise GpustackError(f"rules without a policy in the catalogue: {', '.join(missing)}")
        self.config, self.partial, self.catalogue = config, partial, catalogue
        self.enabled = [
            rules[rule_id]
            for rule_id in sorted(rules)
            if config.selection.enabled(rule_id, default=not catalogue[rule_id].opt_in)
        ]
        cluster = cluster or config.cluster(cache)
        self.each = LintContext(
            resources=(),
            pod_specs=(),
            distribution=config.distribution or (cluster.distribution or None if cluster else None),
            options=config.options,
            cluster=cluster,
            partial=partial,
            kubernetes_version=config.kubernetes_version,
            chart_values=config.chart_keys(),
        )
        local = [rule for rule in self.enabled if rule.file_local(self.each)]
        self.plain = [rule for rule in local if rule.set_fact is None]
        self.factual = [rule for rule in local if rule.set_fact is not None]
        # The set facts of an empty set (no K3s config, no GPU Operator, no GeForce pod: the
        # facts of most sets), under which a file's unit is made before its set is known; no
        # key where one of them cannot be had.
        failed: list[InputError] = []
        _, self.assumed_facts, key = self.set_facts(self.each, failed)
        self.assumed_key = None if failed else key

    def set_facts(self, ctx: LintContext, errors: list[InputError]) -> tuple[list[Rule | Deferred], dict[Any, Any], str]:
        """The file-local rules that run file by file over ``ctx``'s set, the set facts they
        read (computed over the whole set) and their key. A rule whose fact cannot be computed
        loses the set."""
        from gpustack.lint.input.keys import canonical

        rules, facts, named = list(self.plain), {}, []
        for rule in self.factual:
            try:
                facts[rule.set_fact] = rule.set_fact(ctx)  # type: ignore[misc]
            except Exception as exc:
                errors.append(InputError("<input>", f"internal error: {rule.id} failed ({exc!r}); please report it"))
                continue
            named.append((rule.id, facts[rule.set_fact]))
            rules.append(rule)
        return rules, facts, repr(canonical(named))

    def file_unit(self, name: str, text: str, resources: Sequence[Resource]) -> Unit | None:
        """A file's unit before its set is known: DRA claims taken as GPU claims (the engine
        checks that the set's claims say so, ``Files``); None where a rule failed (the engine
        does the file again, and reports why)."""
        failed: list[InputError] = []
        pods = pod_specs(resources, None, failed)
        unit = self.unit(name, text, resources, pods, failed)
        return None if failed else unit

    def unit(self, name: str, text: str, resources: Sequence[Resource], pods: tuple[PodSpec, ...], errors: list[InputError]) -> Unit:
        """The unit of a file whose pod specs are found."""
        results = self.lint_file(name, text, resources, pods, self.plain, {}, errors)
        if self.assumed_key is None:
            return pods, results, None
        return pods, results, self.lint_file(name, text, resources, pods, self.factual, self.assumed_facts, errors)

    def lint_file(
        self,
        name: str,
        text: str,
        resources: Sequence[Resource],
        pods: tuple[PodSpec, ...],
        rules: Sequence[Rule | Deferred],
        facts: Mapping[Any, Any],
        errors: list[InputError],
    ) -> Results:
        """What ``rules`` find in one file's objects and pod specs, root not yet set: the
        context holds that file alone (its text, its chart values setting)."""
        chart = unread.chart_of_values(self.config, name, resources)
        ctx = replace(self.each, resources=tuple(resources), pod_specs=pods, set_facts=facts, texts={name: text},
                      values_files={name: chart} if chart else {})
        targets = Targets(pods, resources)
        hits = [(rule, hit) for rule in targets.woken(rules) for hit in _check_hits(rule, ctx, errors, targets)]
        return tuple(_findings(_assumed(hits, ctx, self.catalogue), self.catalogue, self.config, None))


def _first_of_each(results: list[tuple[Hit, Finding]]) -> list[tuple[Hit, Finding]]:
    """Each finding once (the first root's), by where it is, its rule and its message."""
    seen: set[tuple[str, int, int, str, str]] = set()
    kept = []
    for hit, finding in results:
        identity = (finding.file, finding.line, finding.column, finding.rule, finding.message)
        if identity not in seen:
            seen.add(identity)
            kept.append((hit, finding))
    return kept


def _release_notes(ctx: LintContext) -> list[Note]:
    """Chart releases whose chart or version could not be told, or whose version no key data
    covers: chart rules passed them by. Limits of what gpustack knows, not problems in the file."""
    found = list(dispatch.release_notes(ctx))
    for release in dispatch.releases(ctx):
        resolution = chartversions.resolve(release.chart, release.version, ctx.chart_values)
        if resolution.keys is None and resolution.note is not None:
            found.append((release.resource, release.path, f"{release.owner}: {resolution.note}"))
    return [Note(text, resource.file, resource.locate(path)[0]) for resource, path, text in found]


def _nothing_to_lint(loaded: LoadResult) -> str:
    if loaded.files == 0:
        return "no YAML or JSON files to lint" + (" could be read" if loaded.errors else "")
    return f"no Kubernetes objects (documents with apiVersion and kind) in the {loaded.files} file(s) read"


def _with_value_pods(ctx: LintContext, errors: list[InputError]) -> LintContext:
    """The context with the pod specs that chart releases build from their values (app-template
    and the charts ``data/value-pods.yaml`` describes)."""
    from gpustack.lint.facts.claims import ClaimIndex
    from gpustack.lint.facts.valuepods import value_pod_specs
    from gpustack.lint.facts.valueshapes import chart_shapes

    described = chart_shapes()
    found: list[PodSpec] = []
    claims: ClaimIndex | None = None
    for release in dispatch.releases(ctx):
        if release.chart in described:
            claims = claims or ClaimIndex.from_resources(ctx.resources)
            try:
                found += value_pod_specs(release, claims)
            except Exception as exc:  # a bug must cost this release, not the run
                errors.append(InputError(release.resource.file, f"internal error: reading {release} failed: {exc!r}"))
    if not found:
        return ctx
    return dispatch.same_releases(ctx, replace(ctx, pod_specs=ctx.pod_specs + tuple(found)))


def _values_hits(rule: Rule, ctx: LintContext, errors: list[InputError]) -> list[Hit]:
    """The rule's hits on the chart values of the set (``Rule.values``), once per root."""
    return _checked(rule, (ctx,), "<input>", errors, check=rule.values) if rule.values else []


def _check_hits(rule: Rule, ctx: LintContext, errors: list[InputError], targets: Targets) -> list[Hit]:
    """The rule's check over its targets (a set rule: over the set, unless it is partial)."""
    if rule.scope == "set":
        return [] if ctx.partial else _checked(rule, (ctx,), "<input>", errors)
    hits: list[Hit] = []
    check = rule.check
    for target in targets.of(rule):
        try:
            found = list(check(target, ctx))
        except Exception as exc:  # the rule loses this target, never the run
            errors.append(InputError(_file_of(target), f"internal error: {rule.id} failed ({exc!r}); please report it"))
            continue
        if found:
            hits.extend(found)
    return hits


def _checked(
    rule: Rule, args: tuple[Any, ...], file: str, errors: list[InputError], check: Callable[..., Any] | None = None
) -> list[Hit]:
    """The rule's hits on one target; a rule that raises loses that target, never the run."""
    try:
        return list((check or rule.check)(*args))
    except Exception as exc:
        errors.append(InputError(file, f"internal error: {rule.id} failed ({exc!r}); please report it"))
        return []


def _file_of(target: PodSpec | Resource) -> str:
    return target.resource.file if isinstance(target, PodSpec) else target.file


def _finding(rule: Rule, hit: Hit, info: RuleInfo, config: Config, root: str | None) -> Finding:
    source, where = found_at(hit)  # an overlay's field: where it was written
    line, column = source.locate(where)
    edits = _rebased(hit) if info.fixable and source.file == hit.resource.file else ()
    return Finding(
        file=source.file,
        line=line,
        column=column,
        rule=rule.id,
        name=info.name,
        severity=config.severities.get(rule.id) or hit.severity or info.severity,
        message=hit.message,
        object=hit.resource.ref,
        path=hit.path,
        fix=hit.fix or info.remediation,
        fixable=bool(edits),
        document=source.document,
        edits=edits,
        root=root,
    )


def _rebased(hit: Hit) -> tuple[Edit, ...]:
    """The hit's edits with paths from the document root (a List's item starts at items[n]);
    for an object built from chart values, at the values keys; for an overlay's object, in its
    base; none where one cannot go, nor in a script's document (what was read of it, not its text)."""
    if is_host_script(hit.resource):
        return ()
    prefix = hit.resource.document_path
    origin = hit.resource.origin or (partial(base_path, hit.resource) if hit.resource.written else None)
    if origin is None:
        return tuple(replace(edit, path=(*prefix, *edit.path)) for edit in hit.edits)
    paths = [origin(edit.path) for edit in hit.edits]
    if any(path is None for path in paths):
        return ()
    return tuple(replace(edit, path=(*prefix, *path)) for edit, path in zip(hit.edits, paths, strict=True) if path)
