"""The linter's values: severities, object identity, resources with positions, hits and findings.

All frozen. A rule yields ``Hit``s (what and where inside an object, and the edits that fix
it); the engine turns each into a ``Finding`` (adds severity from the catalogue/config,
file:line:col, fix hint).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from enum import IntEnum
from operator import attrgetter
from typing import Any, Generic, TypeVar

Path = tuple[str | int, ...]
T = TypeVar("T")


class computed_once(Generic[T]):  # lower case: a decorator, like the property it replaces
    """``functools.cached_property`` without the lock Python 3.11 takes on every first read:
    lint builds tens of thousands of objects and reads ``ref``/``kind`` of each once, and that
    lock was a tenth of a run over a cached set. The value goes into the instance's
    ``__dict__`` (a frozen dataclass allows it), where later reads find it without this call."""

    def __init__(self, compute: Callable[[Any], T]) -> None:
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.compute(instance)
        return value


class Severity(IntEnum):
    INFO = 1
    WARNING = 2
    ERROR = 3

    def __str__(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        return cls[text.upper()]


@dataclass(frozen=True)
class ObjectRef:
    """Identity of a Kubernetes object; any part may be unknown."""

    api_version: str | None = None
    kind: str | None = None
    namespace: str | None = None
    name: str | None = None

    def __str__(self) -> str:
        name = self.name or "<unnamed>"
        name = f"{self.namespace}/{name}" if self.namespace else name
        return f"{self.kind or 'object'} {name}"

    def slashed(self) -> str:
        """``Kind/namespace/name``: where a live cluster's object is (``--cluster``)."""
        return "/".join(part for part in (self.kind or "object", self.namespace, self.name or "<unnamed>") if part)

    def as_json(self) -> dict[str, str]:
        pairs = (
            ("apiVersion", self.api_version),
            ("kind", self.kind),
            ("namespace", self.namespace),
            ("name", self.name),
        )
        return {key: value for key, value in pairs if value}


Locator = Callable[[Path], tuple[int, int]]


@dataclass(frozen=True, eq=False)
class Resource:
    """One Kubernetes object from the input.

    ``data`` is plain Python data (dict/list/str/int/float/bool/None) read with Kubernetes'
    YAML semantics. ``locate(path)`` gives the 1-based (line, column) of the key or item at
    ``path`` inside this object (the nearest existing ancestor when the path does not exist,
    e.g. for a missing field); it may be computed lazily.
    """

    file: str
    data: Mapping[str, Any]
    locator: Locator = field(repr=False)
    document: int = 0
    source_comment: str | None = None  # the `# Source:` of `helm template` output, if any
    document_path: Path = ()  # where the object sits in its document: () or ("items", n) of a List
    # An object gpustack built from chart values (``valuepods``): the path in the document's
    # real object that a path of this one is copied from, or None where an edit cannot go.
    origin: Callable[[Path], Path | None] | None = field(default=None, repr=False, compare=False)
    # An object a kustomize overlay built (``input.overlaid``): the input object (its base, or
    # the patch or kustomization that set the field) and the path there where a path of this
    # one was written; findings point there.
    written: Callable[[Path], tuple[Resource, Path]] | None = field(default=None, repr=False, compare=False)

    # Computed once: rules ask for them hundreds of thousands of times on a large input
    @computed_once
    def ref(self) -> ObjectRef:
        metadata = self.data.get("metadata")
        metadata = metadata if isinstance(metadata, Mapping) else {}
        return ObjectRef(
            nonempty_text(self.data.get("apiVersion")),
            self.kind,
            nonempty_text(metadata.get("namespace")),
            nonempty_text(metadata.get("name")),
        )

    @computed_once
    def kind(self) -> str | None:
        return nonempty_text(self.data.get("kind"))

    @computed_once
    def api_version(self) -> str | None:
        """``ref.api_version``, without building the ref (a set-wide scan asks every object)."""
        return nonempty_text(self.data.get("apiVersion"))

    @property
    def api_group(self) -> str:
        """The group part of ``apiVersion`` (``apps`` of ``apps/v1``, ``v1`` of the core
        group's ``v1``), "" without one."""
        return (self.api_version or "").split("/")[0]

    def locate(self, path: Path) -> tuple[int, int]:
        return self.locator(path)

    def place(self, path: Path) -> tuple[Resource, Path]:
        """The input object and the path in it where ``path`` of this object was written:
        itself, unless an overlay built it (``written``)."""
        return (self, path) if self.written is None else self.written(path)

    def get(self, path: Path, default: Any = None) -> Any:
        """The value at ``path`` inside the object, or ``default``."""
        node: Any = self.data
        for step in path:
            if isinstance(node, list):
                if not (isinstance(step, int) and 0 <= step < len(node)):
                    return default
            # Read mappings are dicts: the class test spares most steps the Mapping ABC's check.
            elif not ((node.__class__ is dict or isinstance(node, Mapping)) and isinstance(step, str) and step in node):
                return default
            node = node[step]
        return node


def nonempty_text(value: Any) -> str | None:
    """``value`` when it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def get_value(values: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    """The value at ``keys`` in nested mappings (Helm values, a spec), or ``default``."""
    node: Any = values
    for key in keys:
        if not isinstance(node, Mapping) or key not in node:
            return default
        node = node[key]
    return node


def scalar_text(value: Any) -> str:
    """A YAML scalar as it was written: Kubernetes' YAML 1.1 reading makes an unquoted ``on``
    a boolean, and a label or env value compares as the text ``true``/``false``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class Container:
    """A container of a pod spec: regular, init or ephemeral."""

    data: Mapping[str, Any]
    path: Path  # path inside the resource
    group: str  # "containers" | "initContainers" | "ephemeralContainers"
    # Facts about this container that shared accessors (``quantities.resource_amounts``, …)
    # compute once for all rules: a PodSpec hands out the same Container objects to every rule.
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def once(self, name: str, compute: Callable[[Container], T]) -> T:
        """``compute(self)``, computed once and kept in ``memo`` under ``name``."""
        found = self.memo.get(name)
        if found is None:
            found = self.memo[name] = compute(self)
        return found  # type: ignore[no-any-return]

    @property
    def name(self) -> str:
        return str(self.data.get("name") or "<unnamed>")

    @property
    def image(self) -> str:
        image = self.data.get("image")
        return image if isinstance(image, str) else ""


@dataclass(frozen=True)
class PodSpec:
    """A pod spec found anywhere in a resource (a Pod, a template, a CRD's replica spec)."""

    resource: Resource
    path: Path  # path of the pod spec mapping inside the resource
    spec: Mapping[str, Any]
    template_metadata: Mapping[str, Any]  # metadata of the pod template (labels, annotations), or {}
    gpu_consumer: bool  # requests GPUs, a GPU claim, or reaches GPUs outside the scheduler
    system_component: bool  # a GPU system component (device plugin, DCGM exporter, …)
    # How the pod reaches GPUs it never requests ("sets NVIDIA_VISIBLE_DEVICES=all", "mounts
    # host path /dev/nvidia0"): GPUs outside the scheduler; None when it requests GPUs or has none.
    gpus_outside_scheduler: str | None = None

    def containers(self, *, include_init: bool = True) -> Iterator[Container]:
        if include_init:
            return iter(self._containers)
        return (container for container in self._containers if container.group == "containers")

    def derived(self, compute: Callable[..., T], *over: Any) -> T:
        """``compute(self, *over)``, computed once per pod spec and ``over`` (the same
        objects): what several rules derive from a pod spec and read again and again, such as
        its GPU asks and, under a spec, the node pools it can run on (``cluster``)."""
        memo = self.__dict__.get("_derived")
        if memo is None:
            memo = self.__dict__["_derived"] = {}
        if not over:  # most asks: one value per pod spec, kept under the function itself
            if compute not in memo:
                memo[compute] = compute(self)
            return memo[compute]  # type: ignore[no-any-return]
        key = (compute, *map(id, over))
        found = memo.get(key)
        if found is not None and all(kept is given for kept, given in zip(found[0], over, strict=True)):
            return found[1]  # type: ignore[no-any-return]
        value = compute(self, *over)
        memo[key] = (over, value)
        return value

    @computed_once
    def _containers(self) -> tuple[Container, ...]:
        return tuple(
            Container(item, (*self.path, group, index), group)
            for group in ("containers", "initContainers", "ephemeralContainers")
            if isinstance(items := self.spec.get(group), list)
            for index, item in enumerate(items)
            if isinstance(item, Mapping)
        )


@dataclass(frozen=True)
class SetValue:
    """Set the key at ``path`` to ``value`` (plain data), adding missing parent mappings."""

    path: Path
    value: Any


@dataclass(frozen=True)
class AppendItem:
    """Append ``item`` (plain data) to the list at ``path``, adding the list when missing."""

    path: Path
    item: Any


@dataclass(frozen=True)
class DeleteKey:
    """Remove the key at ``path`` with its value; nothing when it is absent."""

    path: Path


@dataclass(frozen=True)
class RenameKey:
    """Rename the key at ``path`` to ``key``, keeping its value."""

    path: Path
    key: str


# A structured change to one object, addressed like ``Hit.path``; ``gpustack.lint.fix``
# splices it into the file's text.
Edit = SetValue | AppendItem | DeleteKey | RenameKey


@dataclass(frozen=True)
class Hit:
    """What a rule reports: the object, where inside it, and the message.

    ``severity`` overrides the catalogue default when the rule knows better (context);
    ``fix`` overrides the catalogue's remediation with a specific hint; ``edits`` fix the
    problem where the rule can tell that they are safe (applied only when the catalogue
    marks the rule fixable).
    """

    resource: Resource
    path: Path
    message: str
    severity: Severity | None = None
    fix: str | None = None
    edits: tuple[Edit, ...] = field(default=(), compare=False)


@dataclass(frozen=True, order=True)
class Finding:
    """A reported problem, sortable by file, line, column, rule."""

    file: str
    line: int
    column: int
    rule: str
    name: str = field(compare=False)
    severity: Severity = field(compare=False)
    message: str = field(compare=False)
    object: ObjectRef | None = field(compare=False, default=None)
    path: Path = field(compare=False, default=())
    fix: str | None = field(compare=False, default=None)
    fixable: bool = field(compare=False, default=False)
    document: int = field(compare=False, default=0)  # index of the document in its file
    edits: tuple[Edit, ...] = field(compare=False, default=(), repr=False)  # for --fix; paths from the document root
    root: str | None = field(compare=False, default=None)  # the root it was judged in (roots.py); None: the top root


# How findings sort (``order=True`` above), as a key: one call a finding instead of a
# generated ``__lt__`` a comparison (eleven thousand findings take fifty thousand).
FINDING_ORDER = attrgetter(*(item.name for item in fields(Finding) if item.compare))

# Findings as plain data (tuples, strings, numbers: what ``marshal`` writes), for the lint
# cache and worker processes: ``plain_finding`` and back, ``finding_of``.
_FINDING_FIELDS = tuple(item.name for item in fields(Finding))
_finding_values = attrgetter(*_FINDING_FIELDS)
_SEVERITY, _OBJECT, _EDITS_AT = (_FINDING_FIELDS.index(name) for name in ("severity", "object", "edits"))
_SEVERITIES = {int(severity): severity for severity in Severity}
_EDITS: dict[str, type[Any]] = {kind.__name__: kind for kind in (SetValue, AppendItem, DeleteKey, RenameKey)}


def plain_finding(finding: Finding) -> tuple[Any, ...]:
    values = list(_finding_values(finding))
    values[_SEVERITY] = int(finding.severity)
    if finding.object is not None:
        values[_OBJECT] = tuple(vars(finding.object).values())
    if finding.edits:
        values[_EDITS_AT] = tuple((type(edit).__name__, *vars(edit).values()) for edit in finding.edits)
    return tuple(values)


def finding_of(values: tuple[Any, ...]) -> Finding:
    """The finding ``plain_finding`` gave ``values`` for."""
    named = dict(zip(_FINDING_FIELDS, values, strict=True))
    named["severity"] = _SEVERITIES[named["severity"]]
    if named["object"] is not None:
        named["object"] = ObjectRef(*named["object"])
    if named["edits"]:
        named["edits"] = tuple(_EDITS[kind](*edit) for kind, *edit in named["edits"])
    return copied(Finding, named)


def copied(kind: type[T], values: Mapping[str, Any]) -> T:
    """An instance of the frozen dataclass ``kind`` with these field values, as they are:
    its ``__init__`` (one ``object.__setattr__`` a field) costs a tenth of a second for ten
    thousand findings, which the lint cache and worker processes hand back by the thousand."""
    instance = object.__new__(kind)
    instance.__dict__.update(values)
    return instance


@dataclass(frozen=True)
class InputError:
    """A file (or document) that could not be read or parsed; the run goes on without it."""

    file: str
    message: str
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True)
class Note:
    """What the user should know that is neither a finding nor an input error: a skipped
    rule, an expired suppression, input without any Kubernetes object."""

    message: str
    file: str | None = None
    line: int | None = None


def posix_path(file: str) -> str:
    """A linted file's name with forward slashes (Windows paths included), for posixpath."""
    return file.replace("\\", "/")


def resources_by_file(resources: Iterable[Resource]) -> dict[str, list[Resource]]:
    """The resources of each file, in input order."""
    files: dict[str, list[Resource]] = {}
    for resource in resources:
        files.setdefault(resource.file, []).append(resource)
    return files
