"""The chart registry: what gpustack knows of each Helm chart it renders or lints (``specs/charts.yaml``).

Per chart: its role, the repository render installs it from (or the Git repository and folder),
the version render pins by default, the name in its source repository, what it bundles, and
for DRA drivers the driver name and the DeviceClasses the chart creates (and which of them
hand out no GPUs). Render, the spec's defaults and the linter read these facts here instead of
keeping their own copies. Read with libyaml, like the linter's tables, so that ``gpustack lint``
pays no extra import for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from gpustack.shipped import data_dir


@dataclass(frozen=True)
class Bundled:
    """Something a chart deploys besides its main job, and the key of its values (if any)."""

    component: str
    values: str | None = None


@dataclass(frozen=True)
class Chart:
    """One chart of the registry (field meanings: the header of ``specs/charts.yaml``)."""

    name: str
    role: str
    repository: str
    version: str
    oci: str | None = None
    crds: bool = False  # ships CRDs in a crds/ folder, which Helm installs but never upgrades
    path: str | None = None  # the chart's folder when ``repository`` is a Git repository
    source_name: str | None = None
    dra_driver: str | None = None
    device_classes: tuple[str, ...] = ()
    non_gpu_device_classes: tuple[str, ...] = ()  # those of ``device_classes`` that hand out no GPUs
    bundles: tuple[Bundled, ...] = ()
    path_names: tuple[str, ...] = ()  # other names its values files' paths give it (``pathNames``)


@cache
def registry() -> dict[str, Chart]:
    """Every chart of ``specs/charts.yaml`` by published name, in the file's order."""
    import yaml

    text = (data_dir("specs") / "charts.yaml").read_text(encoding="utf-8")
    entries: dict[str, dict[str, Any]] = yaml.load(text, Loader=yaml.CSafeLoader)["charts"]
    return {name: _chart(name, entry) for name, entry in entries.items()}


def chart(name: str) -> Chart:
    return registry()[name]


# The spec's ``dra.driver`` -> the chart that installs that DRA driver (its ``draDriver`` is the
# driver's name). Render installs it; the spec's checks hold its version to the key data.
DRA_DRIVER_CHARTS = {"hami": "hami-dra-driver", "nvidia": "nvidia-dra-driver-gpu"}


def dra_driver_chart(driver: str) -> Chart:
    """The chart of the spec's DRA driver ``driver`` (``hami`` or ``nvidia``)."""
    return chart(DRA_DRIVER_CHARTS[driver])


def _chart(name: str, entry: dict[str, Any]) -> Chart:
    return Chart(
        name=name,
        role=entry["role"],
        repository=entry["repository"],
        version=entry["version"],
        oci=entry.get("oci"),
        crds=bool(entry.get("crds", False)),
        path=entry.get("path"),
        source_name=entry.get("sourceName"),
        dra_driver=entry.get("draDriver"),
        device_classes=tuple(entry.get("deviceClasses", ())),
        non_gpu_device_classes=tuple(entry.get("nonGpuDeviceClasses", ())),
        bundles=tuple(Bundled(**bundled) for bundled in entry.get("bundles", ())),
        path_names=tuple(entry.get("pathNames", ())),
    )
