"""The baseline: today's findings, recorded so that a run reports only new ones.

A finding's identity is its rule, its object (kind, namespace, name) and the path inside that
object (``Finding.path``), never its file, line or column: moving an object to another file,
re-indenting it, reordering keys or documents, or adding lines above it keeps it matched. The
apiVersion is left out as well, so that ``batch/v1beta1`` becoming ``batch/v1`` changes
nothing. A document that is no named object (a plain Helm values file) has only its file to
be known by, so there the file is part of the identity.

The file is a multiset: an entry counts how many findings share its identity, and each
finding consumes one (``suppress.apply`` does the matching). It is JSON, sorted, with a
``version`` field, written atomically::

    {
      "version": 1,
      "entries": [
        {"rule": "GS004", "kind": "Deployment", "namespace": "serving", "name": "vllm",
         "path": ["spec", "template", "spec"], "count": 1}
      ]
    }
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path as FilePath
from typing import Any

from gpustack.errors import GpustackError
from gpustack.lint.model import Finding, Path

VERSION = 1
FINGERPRINT = "gpustackFindingIdentity/v1"  # the SARIF partialFingerprints key


class BaselineError(GpustackError):
    """The baseline file cannot be read, or is not a gpustack baseline."""


@dataclass(frozen=True)
class Identity:
    """What a finding is, independent of where in which file it is."""

    rule: str
    kind: str = ""
    namespace: str = ""
    name: str = ""
    path: Path = ()
    file: str = ""  # only for a document that is no named object

    def as_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"rule": self.rule}
        entry.update((key, value) for key, value in self._object() if value)
        entry["path"] = list(self.path)
        return entry

    def fingerprint(self) -> str:
        """A stable hash of the identity (SARIF ``partialFingerprints``)."""
        text = json.dumps(self.as_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def sort_key(self) -> tuple[str, ...]:
        return (self.rule, *(value for _, value in self._object()), json.dumps(list(self.path)))

    def _object(self) -> tuple[tuple[str, str], ...]:
        return (("kind", self.kind), ("namespace", self.namespace), ("name", self.name), ("file", self.file))


def identity(finding: Finding) -> Identity:
    ref = finding.object
    kind, namespace, name = (ref.kind, ref.namespace, ref.name) if ref else (None, None, None)
    file = "" if kind or name else os.path.normpath(finding.file).replace(os.sep, "/")
    return Identity(finding.rule, kind or "", namespace or "", name or "", tuple(finding.path), file)


@dataclass(frozen=True)
class Baseline:
    """The recorded findings: how many of each identity."""

    file: str
    counts: Mapping[Identity, int]


def render(findings: Iterable[Finding]) -> str:
    """The baseline file's text for ``findings``."""
    counts = Counter(identity(finding) for finding in findings)
    entries = [{**key.as_json(), "count": counts[key]} for key in sorted(counts, key=Identity.sort_key)]
    return json.dumps({"version": VERSION, "entries": entries}, indent=2, ensure_ascii=False) + "\n"


def write(file: str, findings: Iterable[Finding]) -> None:
    """Write the baseline of ``findings`` to ``file``: a temporary file beside it, then a
    rename, so that a failed write never leaves half a baseline."""
    target = FilePath(file)
    text = render(findings)
    try:
        descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    except OSError as exc:
        raise BaselineError(f"{file}: cannot write the baseline: {exc.strerror}") from None
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise BaselineError(f"{file}: cannot write the baseline: {exc.strerror}") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def read(file: str) -> Baseline:
    """The baseline in ``file``; a missing or malformed file raises ``BaselineError``."""
    try:
        data = json.loads(FilePath(file).read_text("utf-8"))
    except OSError as exc:
        raise BaselineError(f"{file}: cannot read the baseline: {exc.strerror}") from None
    except ValueError as exc:
        raise BaselineError(f"{file}: the baseline is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("entries"), list):
        raise BaselineError(
            f"{file}: not a gpustack baseline (version {VERSION} with entries); "
            "write one with `gpustack lint --write-baseline FILE`"
        )
    counts: Counter[Identity] = Counter()
    for index, entry in enumerate(data["entries"]):
        parsed = _entry(entry)
        if parsed is None:
            raise BaselineError(f"{file}: entries[{index}] is not a baseline entry (rule, path, count)")
        counts[parsed[0]] += parsed[1]
    return Baseline(file, counts)


def _entry(entry: Any) -> tuple[Identity, int] | None:
    if not isinstance(entry, dict):
        return None
    texts = {key: entry.get(key, "") for key in ("rule", "kind", "namespace", "name", "file")}
    path, number = entry.get("path"), entry.get("count", 1)
    if (
        not all(isinstance(value, str) for value in texts.values())
        or not texts["rule"]
        or not isinstance(path, list)
        or not all(isinstance(step, str) or (type(step) is int) for step in path)
        or type(number) is not int
        or number < 1
    ):
        return None
    return Identity(path=tuple(path), **texts), number
