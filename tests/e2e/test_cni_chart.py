"""The pod network's values (``cluster/cni/cilium.values.yaml``, gpustack/render/stackfiles/cni.py)
through Cilium's real chart at the pinned version, with a real helm: the chart's values.schema.json
accepts them, every value set reaches the chart's output, and the agent it deploys enforces
NetworkPolicy on every node.

The chart comes from the Go module proxy (tests/cluster/cilium.py); without Go or the proxy the
tier is skipped, and fails instead in CI (``CI=true``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from real_charts import changed, leaves, objects, perturbed, unavailable, volatile_lines, with_leaf
from render_helpers import EXAMPLES, render_file

from gpustack.render.stackfiles import cni
from gpustack.yamlio import dump
from tests.cluster import cilium
from tests.cluster.deploy import Unavailable

pytestmark = pytest.mark.e2e

CNI_EXAMPLES = [p for p in EXAMPLES if "distribution: k3s" not in p.read_text(encoding="utf-8")]
# Enumerated values: another value the schema accepts (a suffix would only prove the schema reads them).
ALTERNATIVES = {("policyEnforcementMode",): "always", ("ipam", "mode"): "cluster-pool"}


@pytest.fixture(scope="module")
def chart() -> Path:
    try:
        return cilium.chart()
    except Unavailable as missing:
        unavailable(str(missing))
        raise


def template(helm: str, chart: Path, values: dict[str, Any], folder: Path, minor: str) -> str:
    path = folder / "values.yaml"
    path.write_text(dump(values), encoding="utf-8")
    done = subprocess.run([helm, "template", cni.RELEASE, str(chart), "-n", cni.NAMESPACE, "-f", str(path),
                           "--kube-version", f"{minor}.0"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _rendered(spec: Path) -> tuple[dict[str, Any], str]:
    rendered, tree = render_file(spec)
    return yaml.safe_load(tree[cni.PATH]), rendered.ctx.stack.spec.cluster.kubernetesVersion


@pytest.mark.parametrize("spec", CNI_EXAMPLES, ids=[p.stem for p in CNI_EXAMPLES])
def test_every_value_reaches_the_chart_and_the_agent_enforces_policies(spec, chart, helm_binary, tmp_path):
    values, minor = _rendered(spec)
    baseline = template(helm_binary, chart, values, tmp_path, minor)
    volatile = volatile_lines(baseline, template(helm_binary, chart, values, tmp_path, minor))
    ignored = []
    for path, value in leaves(values):
        other = ALTERNATIVES.get(path, perturbed(value))
        if not changed(baseline, volatile, template(helm_binary, chart, with_leaf(values, path, other), tmp_path, minor)):
            ignored.append(".".join(map(str, path)))
    assert not ignored, f"values Cilium {cni.VERSION} ignores: {ignored}"
    docs = objects(baseline)
    config = next(d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "cilium-config")["data"]
    assert config["enable-policy"] == cni.POLICY_ENFORCEMENT and config["ipam"] == "kubernetes"
    agent = next(d for d in docs if d["kind"] == "DaemonSet" and d["metadata"]["name"] == "cilium")
    # Every taint tolerated: the GPU pools' taints do not keep the pod network off their nodes.
    assert {"operator": "Exists"} in agent["spec"]["template"]["spec"]["tolerations"]


def test_the_charts_schema_refuses_a_wrong_type(chart, helm_binary, tmp_path):
    """Not a rubber stamp: helm holds the values to the chart's values.schema.json (which types the
    values but enumerates none of the modes, hence ALTERNATIVES and the ConfigMap checks above)."""
    values, minor = _rendered(CNI_EXAMPLES[0])
    path = tmp_path / "values.yaml"
    path.write_text(dump({**values, "operator": {"replicas": "two"}}), encoding="utf-8")
    done = subprocess.run([helm_binary, "template", cni.RELEASE, str(chart), "-f", str(path),
                           "--kube-version", f"{minor}.0"], capture_output=True, text=True, check=False)
    assert done.returncode != 0 and "replicas" in done.stderr
