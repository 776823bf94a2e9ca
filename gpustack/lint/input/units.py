"""File units: what each file gives a run, made once and kept (by the lint cache) or sent (by
worker processes) as plain data.

A file's unit is its pod specs and what the file-local rules find in it; ``Files`` gets each
file's unit from the loader (``Run.file_unit``), from a ``FileUnits`` store (the lint cache),
or makes it with the root's DRA claims, over worker processes when the files are many
(``workers``); and what the rules with a set fact find once the root's facts are known. The
engine asks it for a root's files and runs the rest of the rules itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from gpustack.lint.context import LintContext
from gpustack.lint.input.roots import Root
from gpustack.lint.model import (
    Finding,
    Hit,
    InputError,
    PodSpec,
    Resource,
    copied,
    finding_of,
    plain_finding,
    resources_by_file,
)
from gpustack.lint.registry import Deferred, Rule

if TYPE_CHECKING:
    from gpustack.lint.engine import Run
    from gpustack.lint.facts.claims import ClaimIndex


class FileUnits(Protocol):
    """Where the engine keeps what it found in each file (``gpustack.lint.input.cache``), under a key
    of the file's name and text, the set's DRA claims (pod specs count as GPU consumers by
    them) and the run's settings (the store's own part of the key): the file's ``Unit``, as
    plain data; and what the rules with a set fact found, under that key and the set facts."""

    def get_unit(self, file: str, text: str, claims: str) -> Any | None: ...

    def put_unit(self, file: str, text: str, claims: str, value: Any) -> None: ...

    def get_with_facts(self, file: str, text: str, claims: str, facts: str) -> Any | None: ...

    def put_with_facts(self, file: str, text: str, claims: str, facts: str, value: Any) -> None: ...


Results = tuple[tuple[Hit, Finding], ...]
# A file's unit: its pod specs, what the file-local rules without a set fact find in it, and
# what those with one find under the facts of an empty set (``Run.assumed_facts``; None when
# those facts could not be had).
Unit = tuple[tuple[PodSpec, ...], Results, Results | None]


@dataclass(frozen=True)
class File:
    """One file's objects in a root, its pod specs (DRA claims resolved over the root, the key
    of those claims beside them), what the file-local rules without a set fact found and what
    those with one found under the facts of an empty set (``Unit``)."""

    name: str
    resources: list[Resource]
    claims: str
    pods: tuple[PodSpec, ...]
    results: Results
    assumed: Results | None

    @property
    def unit(self) -> Unit:
        return self.pods, self.results, self.assumed




class Files:
    """What each file gives, computed once per run (a file two roots share is linted once):
    its unit (pod specs, what the file-local rules without a set fact find) from the loader
    (``Run.file_unit``), from ``units``, or computed here with the root's DRA claims (spread
    over worker processes when there are many files: ``workers``); what the rules with a set
    fact (a few, cheap) find, once the root's facts are known.

    A unit that does not depend on the claims (no pod spec claims DRA devices) is keyed by ""
    in place of the claims' key. The loader's units take every claim for a GPU claim: one is
    used where the root's claims say so for each pod spec that claims devices."""

    def __init__(
        self, run: Run, each: LintContext, loaded: Mapping[str, Any], units: FileUnits | None, jobs: int | None
    ) -> None:
        self.run, self.each, self.loaded, self.units, self.jobs = run, each, dict(loaded), units, jobs
        self.done: dict[tuple[str, str], File] = {}
        self.done_with_facts: dict[tuple[str, str, str], Results] = {}

    def of(self, root: Root, errors: list[InputError]) -> list[File]:
        """The root's files, DRA claims resolved over the root."""
        from gpustack.lint.facts.claims import ClaimIndex
        from gpustack.lint.input.keys import canonical

        claims = ClaimIndex.from_resources(root.resources)
        claims_key = repr(canonical(claims))
        files = resources_by_file(root.resources)
        found = {name: file for name, resources in files.items() if (file := self._known(name, resources, claims, claims_key))}
        missing = [(name, resources) for name, resources in files.items() if name not in found]

        def here(chunk: Sequence[tuple[str, list[Resource]]]) -> list[tuple[File, list[InputError]]]:
            done = []
            for name, resources in chunk:
                failed: list[InputError] = []
                pods = pod_specs(resources, claims, failed)
                unit = self.run.unit(name, self._text(name), resources, pods, failed)
                done.append((File(name, resources, unit_key(pods, claims_key), *unit), failed))
            return done

        def there(chunk: Sequence[tuple[str, list[Resource]]]) -> list[tuple[str, Any, list[InputError]]]:
            return [(file.claims, stored_unit(file.resources, file.unit), failed) for file, failed in here(chunk)]

        def back(item: tuple[str, list[Resource]], value: Any) -> tuple[File, list[InputError]]:
            (name, resources), (key, stored, failed) = item, value
            return File(name, resources, key, *restored_unit(resources, stored)), failed

        for file, failed in self._spread([(item[0], item) for item in missing], here, there, back):
            errors += failed
            found[file.name] = self.done[(file.name, file.claims)] = file
            if not failed:  # a rule that failed is reported again next run
                self._keep(file)
        return [found[name] for name in files]

    def _known(self, name: str, resources: list[Resource], claims: ClaimIndex, claims_key: str) -> File | None:
        """The file's unit if this run has it already, the loader made it, or ``units`` holds it."""
        from gpustack.lint.facts.consumers import requests_gpus

        for key in ("", claims_key):
            if (name, key) in self.done:
                return self.done[(name, key)]
        unit, stored = self.loaded.pop(name, (None, None))
        if unit is not None:
            if all(requests_gpus(pod, claims) for pod in unit[0] if pod.spec.get("resourceClaims")):
                key = unit_key(unit[0], claims_key)
                file = self.done[(name, key)] = File(name, resources, key, *unit)
                self._keep(file, stored)
                return file
        for key in ("", claims_key):
            stored = self.units.get_unit(name, self._text(name), key) if self.units is not None else None
            if stored is not None:
                try:
                    file = self.done[(name, key)] = File(name, resources, key, *restored_unit(resources, stored))
                except Exception:  # an entry of another shape: compute it again
                    continue
                return file
        return None

    def _keep(self, file: File, stored: Any = None) -> None:
        """Store the file's unit in ``units`` (``stored``: as plain data already)."""
        if self.units is not None:
            stored = stored if stored is not None else stored_unit(file.resources, file.unit)
            self.units.put_unit(file.name, self._text(file.name), file.claims, stored)

    def with_facts(
        self, files: list[File], rules: Sequence[Rule | Deferred], facts: dict[Any, Any], facts_key: str, errors: list[InputError]
    ) -> list[Results]:
        """What the file-local rules with a set fact find in each of ``files``, root not yet set
        (a deferred rule has none)."""
        rules = [rule for rule in rules if isinstance(rule, Rule) and rule.set_fact is not None]
        found = []
        for file in files:
            if facts_key == self.run.assumed_key and file.assumed is not None:
                found.append(file.assumed)  # the facts the unit was made under
                continue
            key = (file.name, file.claims, facts_key)
            if key not in self.done_with_facts:
                self.done_with_facts[key] = self._with_facts(file, rules, facts, facts_key, errors)
            found.append(self.done_with_facts[key])
        return found

    def _with_facts(
        self, file: File, rules: Sequence[Rule], facts: dict[Any, Any], facts_key: str, errors: list[InputError]
    ) -> Results:
        text = self._text(file.name)
        stored = self.units.get_with_facts(file.name, text, file.claims, facts_key) if self.units is not None else None
        if stored is not None:
            try:
                return restored_results(file.resources, stored)
            except Exception:  # an entry of another shape: lint the file again
                pass
        failed: list[InputError] = []
        results = self.run.lint_file(file.name, text, file.resources, file.pods, rules, facts, failed)
        errors += failed
        if self.units is not None and not failed:
            self.units.put_with_facts(file.name, text, file.claims, facts_key, _result_facts(file.resources, results))
        return results

    def _spread(self, named: list[tuple[str, Any]], here: Any, there: Any, back: Any) -> list[Any]:
        """``here`` over the items of ``named`` (file name, item), over worker processes when
        the files are many (``workers.spread``), chunked by the files' sizes."""
        from gpustack.lint.input import workers

        items = [item for _, item in named]
        sizes = [len(self._text(name)) for name, _ in named]
        jobs = workers.jobs_for(len(items), sum(sizes), self.jobs)
        return workers.spread(items, sizes, jobs, here, there, back)

    def _text(self, name: str) -> str:
        return self.each.texts.get(name, "")


def unit_key(pods: Sequence[PodSpec], claims_key: str) -> str:
    """The key of the DRA claims a unit depends on: "" where no pod spec claims devices."""
    return claims_key if any(pod.spec.get("resourceClaims") for pod in pods) else ""


def stored_unit(resources: Sequence[Resource], unit: Unit) -> Any:
    """A unit as plain data (the cache keeps it, workers send it)."""
    return _each_part(resources, unit, _pod_facts, _result_facts)


def restored_unit(resources: Sequence[Resource], stored: Any) -> Unit:
    """A unit from its plain data (``stored_unit``)."""
    return _each_part(resources, stored, _restored_pods, restored_results)


def _each_part(resources: Sequence[Resource], unit: Any, pods: Callable[..., Any], results: Callable[..., Any]) -> Any:
    """A unit with ``pods`` applied to its pod specs and ``results`` to each of its results
    (the assumed ones may be None): one shape for storing and restoring."""
    found_pods, found, assumed = unit
    return (
        pods(resources, found_pods),
        results(resources, found),
        None if assumed is None else results(resources, assumed),
    )


def _pod_facts(resources: Sequence[Resource], pods: Sequence[PodSpec]) -> list[tuple[int, Any]]:
    """Pod specs as plain data (the cache keeps it, workers send it): each one's object by its
    index in the file, and what extraction decided about it."""
    from gpustack.lint.facts.podspec import facts

    index = _indexes(resources)
    return [(index[id(pod.resource)], facts(pod)) for pod in pods]


def _restored_pods(resources: Sequence[Resource], stored: Any) -> tuple[PodSpec, ...]:
    from gpustack.lint.facts.podspec import restore

    return tuple(restore(resources[number], found) for number, found in stored)


def _result_facts(resources: Sequence[Resource], results: Results) -> list[tuple[int, Any, tuple[Any, ...]]]:
    """Findings as plain data with their hit's object (by index in the file) and path: what
    suppressions read."""
    index = _indexes(resources)
    return [(index[id(hit.resource)], hit.path, plain_finding(finding)) for hit, finding in results]


def restored_results(resources: Sequence[Resource], stored: Any) -> Results:
    """Findings with the hits suppressions read (object, path, message), built without
    ``__init__`` (``copied``): a run over a cached set restores ten thousand."""
    restored = []
    for number, path, values in stored:
        finding = finding_of(values)
        hit = copied(
            Hit,
            {"resource": resources[number], "path": path, "message": finding.message, "severity": None, "fix": None, "edits": ()},
        )
        restored.append((hit, finding))
    return tuple(restored)


def _indexes(resources: Sequence[Resource]) -> dict[int, int]:
    """Each object's index in its file (how the cache refers to it), by ``id``."""
    return {id(resource): number for number, resource in enumerate(resources)}


def pod_specs(resources: Sequence[Resource], claims: ClaimIndex | None, errors: list[InputError]) -> tuple[PodSpec, ...]:
    """The pod specs of one file's objects, DRA claims resolved against the whole set (None:
    not resolved; only pod specs that claim devices read them)."""
    from gpustack.lint.facts.podspec import extract_pod_specs

    try:
        return tuple(pod for resource in resources for pod in extract_pod_specs(resource, claims))
    except Exception as exc:  # a bug must cost the pod rules, not the run
        errors.append(InputError(resources[0].file, f"internal error: finding pod specs failed: {exc!r}"))
        return ()
