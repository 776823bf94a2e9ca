"""Spec errors say what a value must look like, not which regular expression it missed."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack.errors import SpecError
from gpustack.spec.load import load_spec

SPEC = """\
apiVersion: gpustack.io/v1alpha1
kind: GpuStack
metadata:
  name: {name}
spec:
  cluster:
    distribution: k3s
    kubernetesVersion: "{version}"
  nodePools:
    - name: g6
      gpu: {{model: L4}}
  nfd:
    sleepInterval: {interval}
"""


@pytest.mark.parametrize(
    ("values", "line", "expected"),
    [
        ({"name": "../etc"}, 4, "'../etc' must be a DNS-1123 label"),
        ({"version": "1.36.4"}, 8, """'1.36.4' must be a Kubernetes minor version such as "1.36\""""),
        ({"interval": "one minute"}, 13, """'one minute' must be a duration such as "60s\""""),
    ],
)
def test_pattern_errors_name_the_expected_form(tmp_path: Path, values: dict[str, str], line: int, expected: str) -> None:
    fields = {"name": "ok", "version": "1.36", "interval": "60s"} | values
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(**fields))
    with pytest.raises(SpecError) as error:
        load_spec(str(path))
    [problem] = error.value.problems
    assert problem.line == line
    assert problem.message.startswith(expected)
