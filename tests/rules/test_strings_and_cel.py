"""GS029 and GS030 beyond their fixtures: what the messages say, values files, a flow string,
and CEL loaded only for DRA selectors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpustack.lint.context import LintContext
from gpustack.lint.engine import lint
from gpustack.lint.input.load import load_text
from gpustack.lint.policy.config import Config
from gpustack.lint.rules import gs029_yaml11_boolean_string as gs029
from gpustack.lint.rules import gs030_invalid_dra_cel as gs030

from lint_support import load_paths

NODE = "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-1\n  labels: {gpu: on, nvidia.com/gpu.count: 010}\n"
CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: l4, namespace: test-dra}
spec:
  devices:
    requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors:
            - cel: {expression: "device.attributes['gpu.nvidia.com'].productNam == 'NVIDIA L4'"}
            - cel: {expression: "device.driver =="}
"""


def _findings(text: str, rule: str, config: Config = Config()) -> list:  # type: ignore[type-arg]
    return [f for f in lint(load_text("manifest.yaml", text), config).findings if f.rule == rule]


def test_gs029_spells_the_value_as_written_and_what_the_api_server_sees() -> None:
    on, octal = _findings(NODE, "GS029")
    assert "label gpu is unquoted `on`, the boolean true to the API server" in on.message
    assert on.fix == 'Quote it: `"on"`.'
    assert "unquoted `010`, the number 8" in octal.message  # a leading 0 is octal to the API server


def test_gs029_without_the_source_text_keeps_a_generic_message() -> None:
    [resource] = load_text("node.yaml", NODE).resources
    hits = list(gs029.check(resource, LintContext((resource,), ())))
    assert [hit.path[-1] for hit in hits] == ["gpu", "nvidia.com/gpu.count"]
    assert "an unquoted YAML 1.1 scalar" in hits[0].message


def test_gs029_in_a_flow_values_string_points_at_the_string() -> None:
    text = (
        "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata: {name: hami, namespace: kube-system}\n"
        'spec:\n  chart: hami\n  valuesContent: "devicePlugin:\\n  nvidiaNodeSelector:\\n    gpu: on\\n"\n'
    )
    [finding] = _findings(text, "GS029")
    assert (finding.line, finding.column) == (6, 18)
    assert "chart hami (HelmChart kube-system/hami) values: node selector gpu" in finding.message


def test_gs029_in_a_values_file_mapped_in_the_config(tmp_path: Path) -> None:
    (tmp_path / "hami.values.yaml").write_text("devicePlugin:\n  nvidiaNodeSelector:\n    gpu: on\n")
    config = Config(path=tmp_path / ".gpustack.yaml", values=(("*.values.yaml", "hami@2.10.0"),))
    report = lint(load_paths([str(tmp_path)]), config)
    assert [(f.rule, f.line, f.column) for f in report.findings if f.rule == "GS029"] == [("GS029", 3, 5)]


# Keys and scalars that GS029's walk reacts to, so random trees reach every branch of it.
_KEYS = ["labels", "podLabels", "annotations", "nodeSelector", "nvidiaNodeSelector", "matchLabels", "values",
         "value", "operator", "key", "env", "extraEnv", "name", "data", "spec", "metadata", "items"]  # fmt: skip
_SCALARS = st.one_of(st.sampled_from(["on", "x"]), st.booleans(), st.integers(), st.floats(allow_nan=False), st.none())
_TREES = st.recursive(
    _SCALARS,
    lambda trees: st.one_of(st.lists(trees, max_size=4), st.dictionaries(st.sampled_from(_KEYS), trees, max_size=5)),
    max_leaves=30,
)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(_KEYS), _TREES, max_size=5))
def test_gs029_quick_pass_never_hides_what_the_walk_finds(tree: dict[str, Any]) -> None:
    walked: list[gs029.Mistyped] = []
    gs029._walk(tree, ("root",), walked)
    assert gs029.mistyped(tree, ("root",)) == walked
    assert gs029._suspect(tree) or not walked


def test_gs030_compile_errors_are_errors_and_unpublished_names_warnings_with_a_hint() -> None:
    typo, syntax = sorted(_findings(CLAIM, "GS030"), key=lambda f: f.path)
    assert str(typo.severity) == "warning" and "did you mean productName?" in typo.message
    assert typo.fix == "Use `productName`."
    assert str(syntax.severity) == "error" and "does not compile: Syntax error" in syntax.message


def test_gs030_names_of_unknown_drivers_and_patterns() -> None:
    assert not list(gs030.unknown_names("device.attributes['dra.example.com'].model == 'x'"))
    assert not list(gs030.unknown_names("device.capacity['gpu.nvidia.com'].memorySlice3.isZero()"))
    [unknown] = gs030.unknown_names('device.capacity["hami-core-gpu.project-hami.io"]["vram"].isZero()')
    assert (unknown.kind, unknown.name, unknown.closest) == ("capacity", "vram", None)


def test_cel_is_imported_only_for_dra_selectors(tmp_path: Path) -> None:
    (tmp_path / "node.yaml").write_text(NODE)
    (tmp_path / "claim.yaml").write_text(CLAIM)
    probe = (
        "import sys\n"
        "from gpustack.lint.engine import lint\n"
        "from gpustack.lint.input.discover import read_inputs\n"
        "from gpustack.lint.input.load import load_inputs\n"
        f"lint(load_inputs(read_inputs([{str(tmp_path / 'node.yaml')!r}])))\n"
        "before = 'cel' in sys.modules\n"
        f"lint(load_inputs(read_inputs([{str(tmp_path / 'claim.yaml')!r}])))\n"
        "print(before, 'cel' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "True"]
