"""Talos documents as a repository keeps them: none is a Kubernetes object.

- a machine config or a patch of one: top-level ``machine`` or ``cluster`` sections
  (https://www.talos.dev/latest/reference/configuration/v1alpha1/config/);
- talhelper's ``talconfig.yaml``: a cluster name and its nodes, patches inline
  (https://budimanjojo.github.io/talhelper/latest/reference/configuration/).
"""

from __future__ import annotations

from collections.abc import Mapping

from gpustack.lint.model import Resource

MACHINE_SECTIONS = ("machine", "cluster")


def is_talconfig(resource: Resource) -> bool:
    """talhelper's ``talconfig.yaml``: a cluster name and its nodes."""
    return resource.kind is None and "clusterName" in resource.data and isinstance(resource.data.get("nodes"), list)


def is_machine_config(resource: Resource) -> bool:
    """A Talos machine config or patch: a ``machine`` or ``cluster`` section, no kind."""
    return resource.kind is None and any(isinstance(resource.data.get(key), Mapping) for key in MACHINE_SECTIONS)
