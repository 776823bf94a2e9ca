"""Files of the input that hold no Kubernetes object and that no rule reads: a note each.

The loader reads every YAML and JSON file, but documents without apiVersion and kind are
judged only where gpustack knows their shape: kustomizations, Fleet bundles' ``fleet.yaml``, helmfiles, Helm chart folders
(``Chart.yaml`` and its ``values.yaml``), values files a release takes (kustomize
``valuesFile``, ``values:`` in .gpustack.yaml, ``--chart``), K3s and RKE2 config files, Talos
machine configs, talhelper configs, Omni config patches, Image Factory schematics, containerd
config files (``input/containerdfiles``) and Prometheus rule files. Any other such file was read and not checked, and the
report says so (a note per file, with what to do) instead of passing it over: a ``helm -f``
values file of the GPU Operator checked against nothing looks, without it, like a file that
passed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from gpustack.lint.facts import containerdconfig, talos
from gpustack.lint.facts.hostscripts import is_host_script
from gpustack.lint.facts.rulefiles import is_rule_file
from gpustack.lint.facts.clusterconfig import is_k3s_config, k3s_default_runtime
from gpustack.lint.model import Note, Resource
from gpustack.lint.policy.config import Config
from gpustack.lint.releases import inferred
from gpustack.lint.releases.fleet import is_fleet_bundle
from gpustack.lint.releases.helmfile import is_helmfile
from gpustack.lint.releases.helmchart import chart_values_files, is_chart_metadata
from gpustack.lint.releases.kustomize import is_kustomization
from gpustack.lint.releases.release import HelmChartRelease

NOT_CHECKED = (
    "not checked: it holds no Kubernetes objects (apiVersion and kind) and no rule reads its shape; if it is a"
    " chart's values file, name the chart (`values:` in .gpustack.yaml, or --chart NAME[@VERSION])"
)


def is_read(resource: Resource) -> bool:
    """Whether a rule reads this document as what it is: an object, or a shape gpustack knows."""
    return resource.kind is not None or any(
        known(resource)
        for known in (is_kustomization, is_chart_metadata, is_fleet_bundle, is_helmfile, is_k3s_config, _sets_default_runtime, talos.is_talconfig,
                      talos.is_machine_config, talos.is_schematic, talos.is_omni_patch, containerdconfig.is_config_file,
                      is_host_script, is_rule_file, _is_mig_parted_config)
    )


def _is_mig_parted_config(resource: Resource) -> bool:
    from gpustack.lint.facts import migparted  # only where a kind-less document is asked about

    return migparted.is_config(resource.data)


def objectless(resources: Sequence[Resource]) -> bool:
    """A file's documents (at least one) are none of them read (``is_read``)."""
    return bool(resources) and not any(is_read(resource) for resource in resources)


def chart_of_values(config: Config, file: str, resources: Sequence[Resource]) -> str | None:
    """The chart (``name[@version]``) whose values ``file`` holds: the config's ``values:``
    mapping, else ``--chart`` for a file of documents nothing else reads."""
    mapped = config.values_chart(file)
    if mapped is not None or config.values_of is None:
        return mapped
    return config.values_of if objectless(resources) else None


def notes(by_file: Mapping[str, Sequence[Resource]], releases: Iterable[HelmChartRelease]) -> list[Note]:
    """A note for each file no rule reads: object-less, unknown shape, and values of no release
    (why, where its path names a chart whose values its keys do not fit)."""
    declared, files = untaken(by_file, releases)
    return [Note(inferred.why_unchecked(file, resources, declared) or NOT_CHECKED, file) for file, resources in files]


def untaken(
    by_file: Mapping[str, Sequence[Resource]], releases: Iterable[HelmChartRelease]
) -> tuple[dict[str, str], list[tuple[str, Sequence[Resource]]]]:
    """The charts the set releases (key data names, each with what releases it), and the
    object-less files of unknown shape that no release takes."""
    releases = list(releases)
    layered = {layer.resource.file for release in releases for layer in release.layers}
    declared = {
        name: release.owner for release in releases if not release.inferred for name in inferred.data_names(release.chart)
    }
    layered |= chart_values_files(by_file)  # a chart folder's: read by Helm, if only for conditions
    return declared, [(file, resources) for file, resources in by_file.items() if file not in layered and objectless(resources)]


def _sets_default_runtime(resource: Resource) -> bool:
    """A K3s or RKE2 config that sets only containerd's default runtime (runtime evidence reads it)."""
    return k3s_default_runtime(resource) is not None
