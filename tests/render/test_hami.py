"""HAMi chart values (2.10.0 keys) and the refusal of HAMi next to NVIDIA's device plugin."""

from __future__ import annotations

import pytest
from render_helpers import REPO, cli, release, write_spec

from gpustack.render import write
from gpustack.render.components import hami, nfd
from gpustack.yamlio import dump

HAMI = {"devicePlugin": {"enabled": False}, "sharing": {"hami": {"enabled": True}}}
TWO_POOLS = [
    {"name": "shared", "gpu": {"model": "L4"}, "labels": {"gpu-sharing": "hami"}},
    {"name": "whole", "gpu": {"model": "L4"}, "labels": {"gpu-sharing": "none"}},
]


def test_values_follow_the_spec(render_spec):
    rendered, _ = render_spec(
        devicePlugin={"enabled": False},
        sharing={"hami": {"enabled": True, "splitCount": 4, "memoryScaling": 1.5, "coreScaling": 2}},
    )
    plugin = release(rendered, "hami")["devicePlugin"]
    assert (plugin["deviceSplitCount"], plugin["deviceMemoryScaling"], plugin["deviceCoreScaling"]) == (4, 1.5, 2)
    assert plugin["runtimeClassName"] == "nvidia"


def test_node_selector_uses_nfd_and_removes_the_charts_gpu_on(render_spec):
    selector = release(render_spec(**HAMI)[0], "hami")["devicePlugin"]["nvidiaNodeSelector"]
    assert selector == {"gpu": None, nfd.GPU_LABEL: "true"}
    # Helm deletes a default key set to null: the merged selector is NFD's label alone.
    assert "gpu:\n" in dump(selector)


def test_scheduler_tag_uses_the_2_7_key_only_when_set(render_spec):
    assert "tag" not in release(render_spec(**HAMI)[0], "hami")["scheduler"]["kubeScheduler"]["image"]
    values = release(render_spec(devicePlugin={"enabled": False},
                                 sharing={"hami": {"enabled": True, "schedulerImageTag": "v1.36.4"}})[0], "hami")
    assert values["scheduler"]["kubeScheduler"]["image"]["tag"] == "v1.36.4"
    # Every HAMi container has requests: scheduler, its extender, the device plugin and its monitor.
    for resources in (values["scheduler"]["kubeScheduler"]["resources"], values["scheduler"]["extender"]["resources"],
                      values["devicePlugin"]["resources"], values["devicePlugin"]["monitor"]["resources"]):
        assert set(resources["requests"]) == {"cpu", "memory"}
    assert "imageTag" not in str(values)


def test_images_come_from_the_kubernetes_registry_not_the_charts_mirrors(render_spec):
    scheduler = release(render_spec(**HAMI)[0], "hami")["scheduler"]
    assert scheduler["kubeScheduler"]["image"]["registry"] == "registry.k8s.io"
    # The maintained certgen, not the chart's 2021 copy of ingress-nginx's (retired with it).
    assert scheduler["patch"]["imageNew"] == hami.CERTGEN_IMAGE == {
        "registry": "ghcr.io", "repository": "jkroepke/kube-webhook-certgen", "tag": "1.8.7"}


def test_the_scheduler_and_monitor_services_are_cluster_internal(render_spec):
    values = release(render_spec(**HAMI)[0], "hami")
    assert values["scheduler"]["service"] == values["devicePlugin"]["service"] == {"type": "ClusterIP"}


@pytest.mark.parametrize("webhook", [True, False])
def test_the_webhook_is_explicit_in_the_values(render_spec, webhook):
    values = release(render_spec(devicePlugin={"enabled": False},
                                 sharing={"hami": {"enabled": True, "admissionWebhook": webhook}})[0], "hami")
    assert values["scheduler"]["admissionWebhook"] == {"enabled": webhook}


VLLM = {"type": "vllm", "name": "llm", "model": {"huggingFace": "Qwen/Qwen2.5-1.5B-Instruct"}}


def _scheduler_names(rendered):
    return {obj["metadata"]["name"]: obj["spec"]["template"]["spec"].get("schedulerName")
            for obj in rendered.manifests["workloads"] if obj["kind"] == "Deployment"}


def test_workloads_on_hamis_pools_name_its_scheduler(render_spec):
    workloads = [{**VLLM, "pool": "shared"}, {**VLLM, "name": "whole", "pool": "whole"}]
    rendered, _ = render_spec(nodePools=TWO_POOLS, sharing={"hami": {"enabled": True, "pools": ["shared"]}},
                              workloads=workloads)
    assert _scheduler_names(rendered) == {"llm": hami.SCHEDULER_NAME, "whole": None}


def test_workloads_leave_the_scheduler_to_the_webhook_when_asked(render_spec):
    rendered, _ = render_spec(devicePlugin={"enabled": False},
                              sharing={"hami": {"enabled": True, "schedulerName": False}}, workloads=[VLLM])
    assert _scheduler_names(rendered) == {"llm": None}


def test_pool_taints_are_tolerated(render_spec):
    pools = [{"name": "gpu", "gpu": {"model": "L4"}, "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}]
    plugin = release(render_spec(nodePools=pools, **HAMI)[0], "hami")["devicePlugin"]
    assert plugin["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def test_a_subset_of_pools_is_selected_by_their_labels(render_spec):
    rendered, _ = render_spec(nodePools=TWO_POOLS, sharing={"hami": {"enabled": True, "pools": ["shared"]}})
    selector = release(rendered, "hami")["devicePlugin"]["nvidiaNodeSelector"]
    assert selector == {"gpu": None, nfd.GPU_LABEL: "true", "gpu-sharing": "hami"}
    assert hami.node_selector(rendered.ctx.stack) == {nfd.GPU_LABEL: "true", "gpu-sharing": "hami"}


def test_a_subset_keeps_nvidias_device_plugin_off_hamis_pools(render_spec, tmp_path, capsys):
    rendered, tree = render_spec(nodePools=TWO_POOLS, sharing={"hami": {"enabled": True, "pools": ["shared"]}})
    assert release(rendered, "hami")["devicePlugin"]["nvidiaNodeSelector"]["gpu-sharing"] == "hami"
    terms = release(rendered, "nvidia-device-plugin")["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    keep_off = {"key": "gpu-sharing", "operator": "NotIn", "values": ["hami"]}
    assert [term["matchExpressions"] for term in terms] == [
        [{"key": key, "operator": "In", "values": ["true"]}, keep_off] for key in (nfd.GPU_LABEL, nfd.GPU_PRESENT_LABEL)
    ]
    assert any("keep off HAMi's pools `shared`" in note for note in rendered.notes["device-plugin"])
    write.write_tree(tree, tmp_path / "out")
    code, out, _ = cli(capsys, "lint", str(tmp_path / "out"), "--spec", rendered.ctx.spec_file, "--select", "GS009")
    assert (code, "GS009" in out) == (0, False), out


def test_a_subset_without_a_distinguishing_label_is_refused(tmp_path, capsys):
    pools = [{"name": "shared", "gpu": {"model": "L4"}}, {"name": "whole", "gpu": {"model": "L4"}}]
    spec = write_spec(tmp_path, nodePools=pools, sharing={"hami": {"enabled": True, "pools": ["shared"]}})
    code, _, err = cli(capsys, "validate", spec)
    assert code == 2
    assert "spec.sharing.hami.pools" in err and "common entry in nodePools[].labels" in err


@pytest.mark.parametrize("command", ["validate", "render"])
def test_hami_with_the_nvidia_device_plugin_exits_2(tmp_path, capsys, command):
    spec = write_spec(tmp_path, sharing={"hami": {"enabled": True}})
    code, _, err = cli(capsys, command, spec, *(["-o", str(tmp_path / "out")] if command == "render" else []))
    assert code == 2
    assert "spec.devicePlugin.enabled" in err and "nvidia.com/gpu" in err
    assert not (tmp_path / "out").exists()


def test_hami_with_the_gpu_operator_needs_its_device_plugin_off(render_spec, tmp_path, capsys):
    operator = {"gpuOperator": {"enabled": True},
                "nodePools": [{"name": "a", "gpu": {"model": "L4"}, "driver": {"source": "operator"}}]}
    assert cli(capsys, "validate", write_spec(tmp_path, sharing={"hami": {"enabled": True}}, **operator))[0] == 2
    rendered, _ = render_spec(**HAMI, **operator)
    assert release(rendered, "gpu-operator")["devicePlugin"]["enabled"] is False
    assert release(rendered, "hami")


def test_the_example_renders_the_seed_setup(examples):
    rendered, tree = examples["hami-vllm"]
    assert "nvidia-device-plugin" not in {r.name for r in rendered.releases}
    assert release(rendered, "hami")["devicePlugin"]["deviceSplitCount"] == 10
    assert (REPO / "output" / "hami-vllm" / "helm" / "hami.values.yaml").read_text() == tree["helm/hami.values.yaml"]
