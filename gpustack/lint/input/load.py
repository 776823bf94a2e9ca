"""Read manifests into Resources: files, folders, standard input, multi-document streams.

Speed and memory decide the shape (10,000 documents in well under two seconds: benchmarks/README.md).
``discover`` finds the files and reads their bytes; ``parse`` turns each file's text into
plain data and the positions of its keys and items in one pass; ``encode`` makes that the
bytes the lint cache keeps and workers send; ``positions`` answers ``Resource.locate``. Here
the parts meet: files parsed (from the cache, or over worker processes when many), and each
document's objects made Resources (``kind: List`` items included).

Nothing raises: an unreadable path, a binary or non-UTF-8 file, invalid YAML, an alias bomb,
a document that is not a mapping all become ``InputError``s with file and line, and every
other file and document is still read. A list of mappings none of which is an object
(Ansible's tasks and playbooks) is another tool's data, not an error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from gpustack.errors import GpustackError, Problem
from gpustack.lint.input.encode import decoded, encoded
from gpustack.lint.input.parse import Entry, parse_entry, text_entry
from gpustack.lint.input.positions import Positions, Source
from gpustack.lint.model import InputError, Resource, copied

if TYPE_CHECKING:
    from gpustack.lint.input.discover import Input, Inputs


@dataclass(frozen=True)
class LoadResult:
    """What the input held: resources, per-file errors, and each readable file's text."""

    resources: tuple[Resource, ...] = ()
    errors: tuple[InputError, ...] = ()
    texts: Mapping[str, str] = field(default_factory=dict)  # file -> text, for inline comments
    # file -> (what ``FileWork.file_unit`` made of it, that as plain data or None)
    units: Mapping[str, tuple[Any, Any]] = field(default_factory=dict)

    @property
    def files(self) -> int:
        return len(self.texts)

    @staticmethod
    def merge(parts: Iterable[LoadResult]) -> LoadResult:
        parts = list(parts)
        return LoadResult(
            tuple(resource for part in parts for resource in part.resources),
            tuple(error for part in parts for error in part.errors),
            {file: text for part in parts for file, text in part.texts.items()},
            {file: unit for part in parts for file, unit in part.units.items()},
        )


class DocumentCache(Protocol):
    """Where ``load_inputs`` keeps what it parsed (``gpustack.lint.input.cache``): each file's
    entry, encoded (``encode.encoded``), under a key of its content."""

    def documents_key(self, data: bytes) -> str: ...

    def get_documents(self, key: str) -> bytes | None: ...

    def prefetch_documents(self, keys: Iterable[str]) -> None: ...

    def put_documents(self, key: str, payload: bytes) -> None: ...


class FileWork(Protocol):
    """What the engine makes of a file right after it is parsed, in the process that parsed
    it (``engine.Run``): a unit (None: nothing), sent from a worker as plain data
    (``units.stored_unit``)."""

    def file_unit(self, name: str, text: str, resources: Sequence[Resource]) -> Any | None: ...


def load_inputs(
    inputs: Inputs, *, jobs: int | None = None, cache: DocumentCache | None = None, work: FileWork | None = None
) -> LoadResult:
    """Parse what ``read_inputs`` read, in order: each file's entry from ``cache`` when it
    holds one for that content, else parsed (over processes when many) and stored there;
    ``work`` makes each parsed file's unit (``LoadResult.units``), as plain data too where a
    worker sent it or the cache will keep it."""
    results: list[LoadResult | None] = []
    pending: list[tuple[int, Input, str | None]] = []  # (index in results, input, cache key)
    keys = [None if cache is None or isinstance(part, LoadResult) else cache.documents_key(part[1]) for part in inputs]
    if cache is not None:
        cache.prefetch_documents(key for key in keys if key is not None)
    for part, key in zip(inputs, keys, strict=True):
        if isinstance(part, LoadResult):
            results.append(part)
            continue
        payload = cache.get_documents(key) if cache is not None and key is not None else None
        if payload is not None:
            try:
                results.append(restore(part[0], part[1], decoded(payload)))
                continue
            except Exception:  # an entry of another shape: parse the file again
                pass
        results.append(None)
        pending.append((len(results) - 1, part, key))
    store = cache.put_documents if cache is not None else None
    parsed = _parse_all([item for _, item, _ in pending], [key for _, _, key in pending], jobs, store, work)
    for (index, _, _), result in zip(pending, parsed, strict=True):
        results[index] = result
    return LoadResult.merge(result for result in results if result is not None)


def _parse_all(
    files: list[Input],
    keys: list[str | None],
    jobs: int | None,
    store: Callable[[str, bytes], None] | None,
    work: FileWork | None,
) -> list[LoadResult]:
    """Each file parsed (``_parse``) and its unit made (``work``), in order; spread over
    processes when there are many (``workers``): a worker sends each file's entry encoded
    (``encode.encoded``), positions included, with its unit as plain data, and the main process
    stores and restores them. The results are the same either way (tests/lint/test_fast_path.py)."""
    from gpustack.lint.input import workers
    from gpustack.lint.input.units import restored_unit, stored_unit

    sizes = [len(data) for _, data in files]
    items = [(name, data, key) for (name, data), key in zip(files, keys, strict=True)]

    def parsed(name: str, data: bytes) -> tuple[LoadResult, Entry, Any | None]:
        """The file read, its entry, and its unit (None: no ``work``, nothing to make one of)."""
        result, entry = _parse(name, data)
        unit = work.file_unit(name, result.texts.get(name, ""), result.resources) if work and result.resources else None
        return result, entry, unit

    def here(chunk: Sequence[tuple[str, bytes, str | None]]) -> list[LoadResult]:
        results = []
        for name, data, key in chunk:
            result, entry, unit = parsed(name, data)
            if store is not None and key is not None:
                store(key, encoded(entry))
            if unit is not None:
                # Made plain here, beside the worker, where the cache keeps it: not after, alone.
                stored = stored_unit(result.resources, unit) if work and store is not None else None
                result = replace(result, units={name: (unit, stored)})
            results.append(result)
        return results

    def there(chunk: Sequence[tuple[str, bytes, str | None]]) -> list[tuple[bytes, Any]]:
        if work is None:  # the entries alone: no objects to build
            return [(encoded(parse_entry(data)[0]), None) for _, data, _ in chunk]
        sent = []
        for name, data, _ in chunk:
            result, entry, unit = parsed(name, data)
            sent.append((encoded(entry), None if unit is None else stored_unit(result.resources, unit)))
        return sent

    def back(item: tuple[str, bytes, str | None], value: tuple[bytes, Any]) -> LoadResult:
        (name, data, key), (payload, stored) = item, value
        if store is not None and key is not None:
            store(key, payload)
        result = restore(name, data, decoded(payload))
        if stored is None or work is None:
            return result
        return replace(result, units={name: (restored_unit(result.resources, stored), stored)})

    jobs = workers.jobs_for(len(files), sum(sizes), jobs)
    return workers.spread(items, sizes, jobs, here, there, back)


def load_settings(file: str, error: type[GpustackError], what: str) -> tuple[Resource, ...]:
    """The documents of a file gpustack reads for itself (config, policy): an unreadable or
    unparsable file raises ``error`` with the located problems, rather than an InputError."""
    try:
        with open(file, "rb") as handle:
            loaded = load_bytes(file, handle.read())
    except OSError as exc:
        raise error(Problem(f"cannot read {what}: {exc.strerror}", file)) from None
    if loaded.errors:
        raise error([Problem(e.message, e.file, e.line, e.column) for e in loaded.errors])
    return tuple(loaded.resources)


def load_bytes(name: str, data: bytes) -> LoadResult:
    """Decode and parse one file's content."""
    return _parse(name, data)[0]


def load_text(name: str, text: str) -> LoadResult:
    """Parse one YAML (or JSON) stream: one Resource per object, ``kind: List`` items included."""
    return _result(name, text, text_entry(text))


def _parse(name: str, data: bytes) -> tuple[LoadResult, Entry]:
    entry, text = parse_entry(data)
    return _result(name, text, entry), entry


def restore(name: str, data: bytes, entry: Entry) -> LoadResult:
    """What ``load_bytes(name, data)`` gives, from the entry parsing ``data`` gave."""
    kind = entry[0]
    if kind == "errors":
        return _result(name, "", entry)
    return _result(name, data.decode("utf-8-sig"), entry)


def _result(name: str, text: str, entry: Entry) -> LoadResult:
    kind, items = entry
    if kind == "errors":
        return LoadResult(errors=tuple(InputError(name, message, line, column) for message, line, column in items))
    source = Source(name, text)
    resources: list[Resource] = []
    errors: list[InputError] = []
    for item in items:
        _resources_of(source, item, resources, errors)
    return LoadResult(tuple(resources), tuple(errors), {name: text})


def _resources_of(source: Source, entry: tuple[Any, ...], resources: list[Resource], errors: list[InputError]) -> None:
    """The objects of one document, from its entry (``Document.entry``: read as a tuple, as
    building a ``Document`` for each of ten thousand cached documents would cost)."""
    index, data, line, column, comment, root, containers, wheres, problems = entry
    positions = copied(
        Positions,
        {"source": source, "document": index, "data": data, "root": root, "containers": containers, "wheres": wheres},
    )
    errors.extend(InputError(source.name, message, line, column) for message, line, column in problems)
    if data is None or _is_json_patch(data) or _is_data_list(data):  # empty, only comments, a patch, data
        return
    if not isinstance(data, dict):
        what = "a list" if isinstance(data, list) else "a scalar"
        errors.append(InputError(source.name, f"document is {what}, not a Kubernetes object", line, column))
        return
    items = data.get("items")
    if _is_list_kind(data) and isinstance(items, list):
        for number, item in enumerate(items):
            if isinstance(item, dict):
                resources.append(source.resource(index, comment, item, ("items", number), positions))
            else:
                at_line, at_column = positions.locate(("items", number))
                errors.append(InputError(source.name, f"items[{number}] is not a Kubernetes object", at_line, at_column))
        return
    resources.append(source.resource(index, comment, data, (), positions))


def _is_json_patch(data: Any) -> bool:
    """A JSON 6902 patch (``- op: replace``, ``path: /spec/x``), which kustomize's ``patches``
    name by file: operations on an object, not an object."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(item, dict) and isinstance(item.get("op"), str) and "path" in item for item in data)
    )


def _is_data_list(data: Any) -> bool:
    """A list of mappings none of which is a Kubernetes object (Ansible tasks and playbooks,
    inventories): another tool's data, no manifest gone wrong."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(item, dict) and not ("apiVersion" in item and "kind" in item) for item in data)
    )


def _is_list_kind(data: dict[str, Any]) -> bool:
    """``kind: List`` (kubectl get -o yaml) and typed lists such as ``PodList``."""
    kind = data.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and "apiVersion" in data
