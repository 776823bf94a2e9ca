"""GS070's table of PodSpec, Container and ResourceRequirements fields holds every field the
installed Kubernetes models know (lightkube-models' core_v1): a field Kubernetes added since
the table was written would otherwise be reported as unknown."""

from __future__ import annotations

import re

import pytest

from gpustack.shipped import lint_data

core_v1 = pytest.importorskip("lightkube.models.core_v1")


@pytest.mark.parametrize(("level", "model"), [("podSpec", "PodSpec"), ("container", "Container"), ("resources", "ResourceRequirements")])
def test_every_field_the_models_know_is_listed(level: str, model: str) -> None:
    known = set(re.findall(r"\* \*\*(\w+)\*\*", getattr(core_v1, model).__doc__))
    assert known, model
    assert known <= set(lint_data("pod-fields.yaml")[level]), sorted(known - set(lint_data("pod-fields.yaml")[level]))
