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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from gpustack.errors import GpustackError
from gpustack.lint import suppress
from gpustack.lint.catalogue import RuleInfo
from gpustack.lint.config import Config
from gpustack.lint.context import LintContext
from gpustack.lint.load import LoadResult
from gpustack.lint.model import Edit, Finding, Hit, InputError, Note, PodSpec, Resource, Severity
from gpustack.lint.registry import Rule
from gpustack.lint.roots import Root, repositories, split


@dataclass(frozen=True)
class Report:
    """Everything a run found, ready for a reporter."""

    findings: tuple[Finding, ...]
    suppressed: tuple[suppress.Suppressed, ...]
    errors: tuple[InputError, ...]
    notes: tuple[Note, ...]
    files: int
    objects: int
    catalogue: Mapping[str, RuleInfo]
    baseline: suppress.BaselineUse | None = None  # with --baseline: what it matched, what no longer occurs

    def exit_code(self, fail_on: Severity, *, fail_if_no_objects: bool = False) -> int:
        """0 clean; 1 findings at or above ``fail_on``, or an unreadable file; 2 nothing readable."""
        if (self.files == 0 and self.errors) or (fail_if_no_objects and self.objects == 0):
            return 2
        if self.errors or any(finding.severity >= fail_on for finding in self.findings):
            return 1
        return 0


def lint(
    loaded: LoadResult,
    config: Config = Config(),
    *,
    partial: bool = False,
    today: date | None = None,
    rules: Mapping[str, Rule] | None = None,
    catalogue: Mapping[str, RuleInfo] | None = None,
) -> Report:
    """Lint what was loaded. ``rules`` and ``catalogue`` default to the shipped ones."""
    if rules is None:
        from gpustack.lint.rules import RULES as rules
    if catalogue is None:
        from gpustack.lint.catalogue import load_catalogue

        catalogue = load_catalogue()
    missing = sorted(set(rules) - set(catalogue))
    if missing:
        raise GpustackError(f"rules without a policy in the catalogue: {', '.join(missing)}")
    enabled = [rules[rule_id] for rule_id in sorted(rules) if config.selection.enabled(rule_id)]
    notes: list[Note] = []
    errors = list(loaded.errors)
    cluster = config.cluster()
    baseline = config.read_baseline()
    if partial and any(rule.scope == "set" for rule in enabled):
        skipped = ", ".join(rule.id for rule in enabled if rule.scope == "set")
        notes.append(Note(f"{skipped} skipped: --partial input is not the whole set these rules need"))
    each = LintContext(
        resources=(),
        pod_specs=(),
        distribution=config.distribution or (cluster.distribution if cluster else None),
        options=config.options,
        cluster=cluster,
        partial=partial,
        kubernetes_version=config.kubernetes_version,
        values_files={file: chart for file in loaded.texts if (chart := config.values_chart(file))},
        chart_values=config.chart_keys(),
        texts=loaded.texts,
    )
    pod_specs: list[PodSpec] = []
    results: list[tuple[Hit, Finding]] = []
    roots = _roots(loaded, config)
    for root in roots:
        ctx = replace(each, resources=root.resources, pod_specs=_pod_specs(root.resources, errors))
        ctx = _with_value_pods(ctx, errors)
        pod_specs += ctx.pod_specs
        notes += _release_notes(ctx)
        results += _root_results(ctx, root, enabled, config, catalogue, errors)
    if len(roots) > 1:  # a file two clusters deploy is linted with each: report it once
        results = _first_of_each(results)
        notes, errors = list(dict.fromkeys(notes)), list(dict.fromkeys(errors))
    outcome = suppress.apply(
        results,
        resources=loaded.resources,
        pod_specs=pod_specs,
        texts=loaded.texts,
        known_rules=catalogue,
        today=today or date.today(),
        audit=not config.suppressions,
        exemptions=config.exemptions,
        baseline=baseline,
    )
    objects = sum(1 for resource in loaded.resources if resource.ref.api_version and resource.kind)
    if objects == 0:
        notes.append(Note(_nothing_to_lint(loaded)))
    return Report(
        findings=tuple(sorted(outcome.findings)),
        suppressed=tuple(sorted(outcome.suppressed, key=lambda item: item.finding)),
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
    enabled: Sequence[Rule],
    config: Config,
    catalogue: Mapping[str, RuleInfo],
    errors: list[InputError],
) -> list[tuple[Hit, Finding]]:
    """Every enabled rule's hits on one root's set, as findings."""
    targets = _Targets(ctx)
    hits = [(rule, hit) for rule in enabled for hit in _run(rule, ctx, errors, targets)]
    # Positions are parsed lazily per file: locate file by file, document by document.
    hits.sort(key=lambda pair: (pair[1].resource.file, pair[1].resource.document))
    return [(hit, _finding(rule, hit, catalogue[rule.id], config, root.label)) for rule, hit in hits]


def _roots(loaded: LoadResult, config: Config) -> list[Root]:
    """The parts of the input linted apart (``roots.py``): git repositories and the configured
    root folders."""
    return split(loaded.resources, (*repositories(loaded.texts), *map(str, config.roots)))


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
    """Chart releases whose chart or version could not be told: chart rules passed them by."""
    from gpustack.lint.sets import release_notes

    return [Note(text, resource.file, resource.locate(path)[0]) for resource, path, text in release_notes(ctx)]


def _nothing_to_lint(loaded: LoadResult) -> str:
    if loaded.files == 0:
        return "no YAML or JSON files to lint" + (" could be read" if loaded.errors else "")
    return f"no Kubernetes objects (documents with apiVersion and kind) in the {loaded.files} file(s) read"


def _pod_specs(resources: tuple[Resource, ...], errors: list[InputError]) -> tuple[PodSpec, ...]:
    from gpustack.lint.podspec import extract_all

    try:
        return extract_all(resources)
    except Exception as exc:  # a bug must cost the pod rules, not the run
        errors.append(InputError("<input>", f"internal error: finding pod specs failed: {exc!r}"))
        return ()


def _with_value_pods(ctx: LintContext, errors: list[InputError]) -> LintContext:
    """The context with the pod specs that chart releases build from their values (app-template
    and the charts ``data/value-pods.yaml`` describes)."""
    from gpustack.lint import sets
    from gpustack.lint.gpu import ClaimIndex
    from gpustack.lint.valuepods import chart_shapes, value_pod_specs

    described = chart_shapes()
    found: list[PodSpec] = []
    claims: ClaimIndex | None = None
    for release in sets.releases(ctx):
        if release.chart in described:
            claims = claims or ClaimIndex.from_resources(ctx.resources)
            try:
                found += value_pod_specs(release, claims)
            except Exception as exc:  # a bug must cost this release, not the run
                errors.append(InputError(release.resource.file, f"internal error: reading {release} failed: {exc!r}"))
    if not found:
        return ctx
    return sets.same_releases(ctx, replace(ctx, pod_specs=ctx.pod_specs + tuple(found)))


class _Targets:
    """Pod specs and objects grouped by kind once per run, in input order: a rule for
    Deployments visits Deployments only, instead of asking every object its kind."""

    def __init__(self, ctx: LintContext) -> None:
        self.pods: Sequence[PodSpec] = ctx.pod_specs
        self.resources: Sequence[Resource] = ctx.resources
        self.pods_by_kind: dict[str | None, list[PodSpec]] = {}
        self.resources_by_kind: dict[str | None, list[Resource]] = {}
        for pod in self.pods:
            self.pods_by_kind.setdefault(pod.resource.kind, []).append(pod)
        for resource in self.resources:
            self.resources_by_kind.setdefault(resource.kind, []).append(resource)

    def of(self, rule: Rule) -> Sequence[PodSpec] | Sequence[Resource]:
        pods = rule.scope == "pod"
        everything = self.pods if pods else self.resources
        if not rule.kinds:
            return everything
        if len(rule.kinds) == 1:
            by_kind: Mapping[str | None, Sequence[Any]] = self.pods_by_kind if pods else self.resources_by_kind
            return by_kind.get(next(iter(rule.kinds)), ())
        return [target for target in everything if rule.applies_to(_kind_of(target))]


def _kind_of(target: PodSpec | Resource) -> str | None:
    return target.resource.kind if isinstance(target, PodSpec) else target.kind


def _run(rule: Rule, ctx: LintContext, errors: list[InputError], targets: _Targets | None = None) -> list[Hit]:
    values = _checked(rule, (ctx,), "<input>", errors, check=rule.values) if rule.values else []
    if rule.scope == "set":
        return values if ctx.partial else values + _checked(rule, (ctx,), "<input>", errors)
    hits = values
    check = rule.check
    for target in (targets or _Targets(ctx)).of(rule):
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
    line, column = hit.resource.locate(hit.path)
    edits = _rebased(hit) if info.fixable else ()
    return Finding(
        file=hit.resource.file,
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
        document=hit.resource.document,
        edits=edits,
        root=root,
    )


def _rebased(hit: Hit) -> tuple[Edit, ...]:
    """The hit's edits with paths from the document root (a List's item starts at items[n]);
    for an object built from chart values, at the values keys, or none where one cannot go."""
    prefix = hit.resource.document_path
    origin = hit.resource.origin
    if origin is None:
        return tuple(replace(edit, path=(*prefix, *edit.path)) for edit in hit.edits)
    paths = [origin(edit.path) for edit in hit.edits]
    if any(path is None for path in paths):
        return ()
    return tuple(replace(edit, path=(*prefix, *path)) for edit, path in zip(hit.edits, paths, strict=True) if path)
