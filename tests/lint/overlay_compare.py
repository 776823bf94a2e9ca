"""The built-in overlay builder against ``kustomize build``: the objects of one overlay
from each, as plain data, and what differs.

The corpora hold part of each repository: a kustomization may list a file the corpus lacks,
which ``kustomize build`` refuses and the built-in builder leaves out. ``complete`` copies a
repository with such entries (and remote ones) removed from its kustomizations, so that both
builders read the same input.

Out of scope, so left out of the comparison: objects kustomize generates
(``configMapGenerator``, ``secretGenerator``, ``helmCharts``: removed by ``complete``, and
left out of kustomize's output elsewhere) and the hash suffix of generated names wherever kustomize writes it
(a ``configMapRef``, a volume's ``configMap.name``). Everything else must be equal, key order
aside: the same objects by kind, namespace and name, with the same data.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gpustack.lint.input.load import load_text
from gpustack.lint.input.overlays import build
from gpustack.lint.input.setfiles import SetFiles
from gpustack.lint.model import Resource

SUFFIX = re.compile(r"^(?P<name>.+)-[a-z0-9]{10}$")
TRANSFORMS = ("patches", "patchesStrategicMerge", "patchesJson6902", "namespace", "images", "replicas",
              "commonLabels", "labels", "commonAnnotations", "namePrefix", "nameSuffix", "components")


def set_of(folder: Path) -> tuple[list[Resource], dict[str, str]]:
    """Every YAML file under ``folder``, loaded as ``gpustack lint`` loads it."""
    resources: list[Resource] = []
    texts: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        if path.suffix in (".yaml", ".yml") or path.name == "Kustomization":
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            loaded = load_text(str(path), text)
            resources += loaded.resources
            texts[str(path)] = text
    return resources, texts


def complete(repository: Path, into: Path) -> Path:
    """A copy of ``repository``'s YAML files under ``into``, its kustomizations listing only
    what the copy holds."""
    import yaml

    for path in repository.rglob("*"):
        if path.is_file() and (path.suffix in (".yaml", ".yml") or path.name == "Kustomization"):
            target = into / path.relative_to(repository)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    for path in into.rglob("*"):
        if path.name not in ("kustomization.yaml", "kustomization.yml", "Kustomization"):
            continue
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError:
            continue
        if isinstance(data, dict):
            _keep_present(data, path.parent)
            path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return into


def _keep_present(data: dict[str, Any], folder: Path) -> None:
    def present(entry: Any) -> bool:
        return isinstance(entry, str) and "://" not in entry and (folder / entry).exists()

    for key in ("resources", "bases", "components", "patchesStrategicMerge"):
        if isinstance(data.get(key), list):
            data[key] = [entry for entry in data[key] if present(entry) or (key == "patchesStrategicMerge" and "\n" in str(entry))]
    for key in ("patches", "patchesJson6902"):
        if isinstance(data.get(key), list):
            data[key] = [entry for entry in data[key] if not (isinstance(entry, dict) and "path" in entry) or present(entry["path"])]
    for key in ("configMapGenerator", "secretGenerator", "helmCharts", "replacements"):
        data.pop(key, None)


def overlays(files: SetFiles) -> list[str]:
    """The kustomization folders of the set that patch or transform what they gather."""
    return sorted(folder for folder, kustomization in files.kustomizations.items()
                  if any(key in kustomization.data for key in TRANSFORMS))


def builtin(folder: str, files: SetFiles) -> list[dict[str, Any]]:
    return [made.data for made in build(folder, files).objects]


def kustomize(binary: Path, folder: str) -> list[dict[str, Any]] | None:
    """``kustomize build`` of ``folder``; None when it fails (a file the corpus lacks, a remote base)."""
    done = subprocess.run([str(binary), "build", "--load-restrictor", "LoadRestrictionsNone", folder],
                          capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        return None
    return [resource.data for resource in load_text("<kustomize>", done.stdout).resources]


def differences(ours: Iterable[dict[str, Any]], theirs: Iterable[dict[str, Any]]) -> list[str]:
    mine = {_identity(data): data for data in ours}
    real = {_identity(data): data for data in theirs}
    generated = {key for key in real if key not in mine and key[0] in ("ConfigMap", "Secret")}
    renamed = {key[2]: SUFFIX.match(key[2])["name"] for key in generated if key[2] and SUFFIX.match(key[2])}
    found = []
    for key in sorted(set(mine) | set(real) - generated, key=str):
        if key not in real:
            found.append(f"{key}: only in the built-in build")
        elif key not in mine:
            found.append(f"{key}: only in kustomize's")
        elif _plain(mine[key], {}) != _plain(real[key], renamed):
            found.append(f"{key}: differs\n  built-in:  {_plain(mine[key], {})}\n  kustomize: {_plain(real[key], renamed)}")
    return found


def _identity(data: dict[str, Any]) -> tuple[Any, ...]:
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    return data.get("kind"), metadata.get("namespace"), metadata.get("name")


def _plain(value: Any, renamed: dict[str, str]) -> Any:
    """``value`` with generated names as written, for comparing (dicts compare without order)."""
    if isinstance(value, dict):
        return {key: _plain(item, renamed) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item, renamed) for item in value]
    return renamed.get(value, value) if isinstance(value, str) else value
