"""Quantities, image references and host paths as the rules read them."""

from __future__ import annotations

from fractions import Fraction

import pytest

from gpustack.lint.facts.components import system_components
from gpustack.lint.facts.hostpaths import normalise_host_path
from gpustack.lint.facts.images import image_repository, image_tag
from gpustack.lint.facts.quantities import parse_quantity


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, Fraction(1)),
        ("2", Fraction(2)),
        (0.5, Fraction(1, 2)),
        ("500m", Fraction(1, 2)),
        ("4Gi", Fraction(4 * 2**30)),
        ("1e3", Fraction(1000)),
        ("8000", Fraction(8000)),
        ("${GPUS}", None),
        (True, None),
        (None, None),
    ],
)
def test_parse_quantity(value: object, expected: Fraction | None) -> None:
    assert parse_quantity(value) == expected


@pytest.mark.parametrize(
    ("image", "repository", "tag"),
    [
        ("nvcr.io/nvidia/k8s-device-plugin:v0.20.0", "nvcr.io/nvidia/k8s-device-plugin", "v0.20.0"),
        ("docker.io/library/busybox", "busybox", None),
        ("registry:5000/dcgm-exporter@sha256:abc", "registry:5000/dcgm-exporter", None),
        ("projecthami/hami:latest", "projecthami/hami", "latest"),
    ],
)
def test_image_reference(image: str, repository: str, tag: str | None) -> None:
    assert (image_repository(image), image_tag(image)) == (repository, tag)


def test_host_paths_normalised() -> None:
    assert normalise_host_path("/var/run/cdi/") == "/run/cdi"
    assert normalise_host_path("//dev/../dev/nvidia0") == "/dev/nvidia0"
    assert normalise_host_path("/") == "/"


def test_device_plugin_mounts_root_read_only_only() -> None:
    plugin = next(c for c in system_components() if c.name == "device-plugin")
    assert plugin.allows_host_path("/var/lib/kubelet/device-plugins", read_only=False)
    assert plugin.allows_host_path("/", read_only=True)
    assert not plugin.allows_host_path("/", read_only=False)
    assert not plugin.allows_host_path("/etc", read_only=True)
