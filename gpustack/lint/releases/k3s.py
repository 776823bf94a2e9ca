"""K3s's Helm controller: ``HelmChart`` releases, with their ``HelmChartConfig`` values.

A ``HelmChart`` (``helm.cattle.io``) names the chart, its repository and version and carries
values as ``valuesContent`` and ``set``; a ``HelmChartConfig`` of the same namespace and name
adds values between them, and one without a HelmChart configures a chart K3s packages itself.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.model import Resource, nonempty_text
from gpustack.lint.releases.helmvalues import ValuesLayer, dotted_layer, text_layer
from gpustack.lint.releases.release import HelmChartRelease, WholeSet, new_release, spec_of, with_layers

KINDS = frozenset({"HelmChart"})



def releases_of(resource: Resource) -> Iterator[HelmChartRelease]:
    spec = spec_of(resource, "helm.cattle.io")
    if spec is None:
        return
    # Precedence (K3s docs, add-ons/helm): defaults, valuesContent, valuesSecrets,
    # HelmChartConfig, set; ``releases`` inserts the HelmChartConfigs.
    layers = [text_layer(resource, ("spec", "valuesContent")), dotted_layer(resource, ("spec", "set"))]
    yield new_release(
        resource, ("spec", "chart"), spec.get("chart"), resource.ref.name, [layer for layer in layers if layer],
        repo=nonempty_text(spec.get("repo")), version=spec.get("version"),
    )


def declares(release: HelmChartRelease) -> bool:
    """Whether K3s's Helm controller installs ``release`` (a HelmChart or HelmChartConfig): K3s
    context by itself (RKE2's helm-controller reads it too; both keep runc the default)."""
    return (release.resource.api_version or "").startswith("helm.cattle.io/")


def settle(release: HelmChartRelease, whole: WholeSet) -> HelmChartRelease:
    """The release with the HelmChartConfig of its namespace and name, between its
    ``valuesContent`` and its ``set``."""
    resource = release.resource
    extra = tuple(_configs(whole).pop((resource.ref.namespace, resource.ref.name), []))
    below = tuple(layer for layer in release.layers if layer.written is None)
    above = tuple(layer for layer in release.layers if layer.written is not None)  # `set`
    return with_layers(release, below + extra + above)


def set_releases(whole: WholeSet) -> Iterator[HelmChartRelease]:
    """The HelmChartConfigs that no HelmChart of the set took."""
    for (namespace, name), layers in _configs(whole).items():  # a packaged K3s chart configured (traefik, …)
        yield new_release(layers[0].resource, ("metadata", "name"), name, name, layers)


def _configs(whole: WholeSet) -> dict[tuple[str | None, str | None], list[ValuesLayer]]:
    configs: dict[tuple[str | None, str | None], list[ValuesLayer]] | None = whole.memo.get("k3s-configs")
    if configs is None:
        configs = whole.memo["k3s-configs"] = {}
        for resource in whole.resources:
            if resource.kind == "HelmChartConfig" and (resource.api_version or "").startswith("helm.cattle.io/"):
                layer = text_layer(resource, ("spec", "valuesContent"))
                if layer is not None:
                    configs.setdefault((resource.ref.namespace, resource.ref.name), []).append(layer)
    return configs
