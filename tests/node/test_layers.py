"""Each layer's ok, problem and n/a paths on small trees (the example nodes are in test_scenarios)."""

from __future__ import annotations

import pytest
from nodetree import AWS_KERNEL, DRIVER, V2_NVIDIA, NodeTree

from gpustack.node import cdi, containerd, deviceplugin, devices, driver, modules, pci, secureboot, toolkit
from gpustack.node.result import LayerResult, Status


def assert_result(result: LayerResult, status: Status, *fragments: str) -> None:
    assert result.status is status, result
    for fragment in fragments:
        assert fragment in f"{result.detail} {result.fix}", result


# --- pci ---------------------------------------------------------------------------------------


def test_pci_names_the_class_of_a_geforce(geforce_pc: NodeTree) -> None:
    result = pci.check(geforce_pc.root)
    assert result.detail == "1 NVIDIA GPU: 0000:01:00.0 [10de:2705] class 0300"  # not the 0403 audio function


def test_pci_warns_that_amazons_vga_device_matches_pci_0300_too(l4_vm: NodeTree) -> None:
    assert_result(pci.check(l4_vm.root), Status.OK, "[10de:27b8] class 0302", "other VGA devices: 1d0f:1111")


def test_pci_without_an_nvidia_gpu(tree: NodeTree) -> None:
    tree.pci("0000:00:03.0", "1d0f", "1111", "030000")
    assert_result(pci.check(tree.root), Status.PROBLEM, "no NVIDIA GPU", "lspci -nn")


def test_pci_counts_several_gpus(tree: NodeTree) -> None:
    for slot in range(2):
        tree.pci(f"0000:0{slot}:00.0", "10de", "2335", "030200")
    assert pci.check(tree.root).detail.startswith("2 NVIDIA GPUs:")


# --- nouveau -----------------------------------------------------------------------------------


def test_nouveau_loaded(nouveau_node: NodeTree) -> None:
    assert_result(modules.check(nouveau_node.root), Status.PROBLEM, "nouveau driver is loaded", "blacklist nouveau")


def test_nouveau_cannot_be_told_without_proc_modules(tree: NodeTree) -> None:
    assert_result(modules.check(tree.root), Status.NA, "cannot tell: no /proc/modules")


# --- driver ------------------------------------------------------------------------------------


def test_driver_loaded_with_its_dkms_build(l4_vm: NodeTree) -> None:
    assert driver.check(l4_vm.root).detail == f"nvidia {DRIVER} loaded on kernel {AWS_KERNEL}; DKMS build {DRIVER}"


def test_driver_version_from_the_proprietary_module_line(tree: NodeTree) -> None:
    tree.file("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12\n")
    assert driver.loaded_version(tree.root) == "535.183.01"


def test_driver_loaded_without_dkms_is_a_precompiled_module(tree: NodeTree) -> None:
    tree.kernel(AWS_KERNEL).loaded_driver("580.159.04")
    assert_result(driver.check(tree.root), Status.OK, "580.159.04", "precompiled")


def test_driver_built_but_not_loaded(tree: NodeTree) -> None:
    tree.kernel(AWS_KERNEL).dkms(DRIVER, AWS_KERNEL)
    assert_result(driver.check(tree.root), Status.PROBLEM, "not loaded", "modprobe nvidia")


def test_driver_built_for_an_older_kernel_only(tree: NodeTree) -> None:
    # A kernel update without the DKMS rebuild
    tree.kernel("6.8.0-139-generic").dkms(DRIVER, "6.8.0-138-generic").folder("/var/lib/dkms/nvidia/kernel-x")
    assert_result(
        driver.check(tree.root),
        Status.PROBLEM,
        "for kernel 6.8.0-138-generic, not for the running kernel 6.8.0-139-generic",
        "linux-headers-6.8.0-139-generic",
        "dkms autoinstall",
    )


def test_no_driver(nouveau_node: NodeTree) -> None:
    assert_result(driver.check(nouveau_node.root), Status.PROBLEM, "no NVIDIA driver", "nvidia-driver-pinning-<release>")


def test_installed_version_falls_back_to_the_newest_dkms_build(tree: NodeTree) -> None:
    tree.kernel(AWS_KERNEL).dkms("595.9", AWS_KERNEL).dkms("595.84", AWS_KERNEL).dkms("610.1", "other")
    assert driver.read(tree.root).installed_version == "595.84"


@pytest.mark.parametrize(
    ("files", "source"),
    [
        (["/run/nvidia/driver/usr/bin/nvidia-smi"], "operator"),
        # the host's / bind-mounted there: still a host driver
        (["/run/nvidia/driver/usr/bin/nvidia-smi", "/usr/bin/nvidia-smi"], "host"),
        (["/usr/bin/nvidia-smi"], "host"),
    ],
)
def test_driver_source(tree: NodeTree, files: list[str], source: str) -> None:
    for path in files:
        tree.file(path)
    assert driver.source(tree.root) == source


# --- device nodes ------------------------------------------------------------------------------


def test_device_nodes_with_nvidia_caps(l4_vm: NodeTree) -> None:
    assert devices.check(l4_vm.root).detail == "nvidia0, nvidiactl, nvidia-uvm; nvidia-caps present"


def test_device_nodes_missing(nouveau_node: NodeTree) -> None:
    assert_result(devices.check(nouveau_node.root), Status.PROBLEM, "no /dev/nvidia<N>", "nvidia-modprobe")


def test_device_nodes_fewer_than_gpus(tree: NodeTree) -> None:
    tree.pci("0000:01:00.0", "10de", "2335", "030200").pci("0000:02:00.0", "10de", "2335", "030200")
    tree.gpu_devices(count=1)
    assert_result(devices.check(tree.root), Status.PROBLEM, "1 /dev/nvidia<N> node(s) for 2 GPUs", "dmesg")


def test_device_nodes_without_uvm(tree: NodeTree) -> None:
    tree.dev("nvidia0", "nvidiactl")
    assert_result(devices.check(tree.root), Status.PROBLEM, "missing /dev/nvidia-uvm", "nvidia-modprobe -u")


# --- toolkit -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "shown"), [("cdi", "mode cdi (/etc/"), (None, "mode auto (default)")])
def test_toolkit_mode(tree: NodeTree, mode: str | None, shown: str) -> None:
    tree.toolkit(mode)
    assert_result(toolkit.check(tree.root), Status.OK, "/usr/bin/nvidia-ctk, /usr/bin/nvidia-container-runtime", shown)


def test_toolkit_installed_by_the_gpu_operator(tree: NodeTree) -> None:
    tree.program("/usr/local/nvidia/toolkit/nvidia-ctk").program("/usr/local/nvidia/toolkit/nvidia-container-runtime")
    assert toolkit.check(tree.root).status is Status.OK


def test_toolkit_without_nvidia_ctk(tree: NodeTree) -> None:
    tree.program("/usr/bin/nvidia-container-runtime")
    assert_result(toolkit.check(tree.root), Status.PROBLEM, "nvidia-ctk not on PATH", "nvidia-container-toolkit")


def test_toolkit_config_that_does_not_parse(tree: NodeTree) -> None:
    tree.toolkit().file("/etc/nvidia-container-runtime/config.toml", "mode = \n")
    assert_result(toolkit.check(tree.root), Status.PROBLEM, "config.toml: ", "nvidia-ctk config default")


# --- cdi ---------------------------------------------------------------------------------------


def test_cdi_json_spec_in_etc(tree: NodeTree) -> None:
    spec = '{"cdiVersion": "0.5.0", "kind": "nvidia.com/gpu", "devices": [{"name": "all"}]}'
    tree.loaded_driver().file("/etc/cdi/nvidia.json", spec)
    assert cdi.check(tree.root).detail == "nvidia.com/gpu in /etc/cdi/nvidia.json: 1 devices"


def test_cdi_spec_of_another_kind_does_not_count(tree: NodeTree) -> None:
    tree.file("/etc/cdi/fpga.yaml", "cdiVersion: 0.5.0\nkind: vendor.com/fpga\ndevices: []\n")
    assert_result(cdi.check(tree.root), Status.NA, "no CDI spec for nvidia.com/gpu; toolkit mode auto")


def test_cdi_mode_without_a_spec(tree: NodeTree) -> None:
    tree.toolkit("cdi")
    assert_result(cdi.check(tree.root), Status.PROBLEM, "toolkit mode cdi but no CDI spec", "nvidia-ctk cdi generate")


def test_cdi_spec_older_than_the_loaded_driver(tree: NodeTree) -> None:
    tree.loaded_driver("595.90").cdi_spec(driver="595.84")
    assert_result(
        cdi.check(tree.root),
        Status.PROBLEM,
        "generated for driver 595.84, but 595.90 is loaded",
        "--output=/var/run/cdi/nvidia.yaml",
    )


def test_cdi_spec_that_does_not_parse(tree: NodeTree) -> None:
    tree.file("/etc/cdi/nvidia.yaml", "kind: [unclosed\n")
    assert_result(cdi.check(tree.root), Status.PROBLEM, "/etc/cdi/nvidia.yaml", "nvidia-ctk cdi generate")


# --- containerd --------------------------------------------------------------------------------


def test_containerd_stock_drop_in(geforce_pc: NodeTree) -> None:
    assert containerd.check(geforce_pc.root).detail == (
        "nvidia → /usr/bin/nvidia-container-runtime (/etc/containerd/conf.d/99-nvidia.toml); "
        "default runtime runc (GPU pods need runtimeClassName: nvidia)"
    )


def test_containerd_k3s_config_v3(l4_vm: NodeTree) -> None:
    assert_result(containerd.check(l4_vm.root), Status.OK, "(/var/lib/rancher/k3s/agent/etc/containerd/config.toml)")


def test_containerd_v2_format_as_default_runtime(tree: NodeTree) -> None:
    default = '[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "nvidia"\n'
    tree.file("/etc/containerd/config.toml", "version = 2\n" + default + V2_NVIDIA)
    assert_result(containerd.check(tree.root), Status.OK, "default runtime nvidia")
    assert "runtimeClassName" not in containerd.check(tree.root).detail


def test_containerd_relative_imports(tree: NodeTree) -> None:
    tree.file("/etc/containerd/config.toml", 'version = 2\nimports = ["runtimes/*.toml"]\n')
    tree.file("/etc/containerd/runtimes/nvidia.toml", "version = 2\n" + V2_NVIDIA)
    assert_result(containerd.check(tree.root), Status.OK, "(/etc/containerd/runtimes/nvidia.toml)")


def test_containerd_without_config(tree: NodeTree) -> None:
    assert_result(
        containerd.check(tree.root),
        Status.PROBLEM,
        "no containerd config at /etc/containerd/config.toml",
        "nvidia-ctk runtime configure --runtime=containerd",
    )


def test_containerd_stock_without_nvidia(tree: NodeTree) -> None:
    tree.stock_containerd(nvidia=None)
    assert_result(containerd.check(tree.root), Status.PROBLEM, "no nvidia runtime in /etc/containerd/config.toml")


def test_containerd_k3s_without_nvidia(k3s_without_nvidia: NodeTree) -> None:
    result = containerd.check(k3s_without_nvidia.root)
    assert_result(result, Status.PROBLEM, "no nvidia runtime", "systemctl restart k3s")


def test_containerd_k3s_before_its_first_start(tree: NodeTree) -> None:
    tree.folder("/etc/rancher/k3s")
    assert_result(containerd.check(tree.root), Status.PROBLEM, "no containerd config at /var/lib/rancher/k3s/")


def test_containerd_config_that_does_not_parse(tree: NodeTree) -> None:
    tree.file("/etc/containerd/config.toml", "[plugins\n")
    assert_result(containerd.check(tree.root), Status.PROBLEM, "/etc/containerd/config.toml: ", "TOML")


# --- device plugin -----------------------------------------------------------------------------


def test_device_plugin_socket_nvidia_first(tree: NodeTree) -> None:
    tree.kubelet("hami.sock", "nvidia-gpu.sock")
    assert deviceplugin.check(tree.root).detail == "nvidia-gpu.sock, hami.sock in /var/lib/kubelet/device-plugins"


def test_device_plugin_only_the_kubelets_socket(k3s_without_nvidia: NodeTree) -> None:
    assert_result(deviceplugin.check(k3s_without_nvidia.root), Status.PROBLEM, "no device plugin socket", "DaemonSet")


def test_device_plugin_without_kubelet(nouveau_node: NodeTree) -> None:
    assert_result(deviceplugin.check(nouveau_node.root), Status.PROBLEM, "no kubelet has run", "join the node")


# --- secure boot -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("secure_boot", "loaded", "status", "fragment"),
    [
        (False, False, Status.OK, "Secure Boot disabled"),
        (None, False, Status.OK, "Secure Boot disabled"),  # EFI without the variable
        (True, True, Status.OK, "so it is signed"),
        (True, False, Status.PROBLEM, "mokutil --import"),
    ],
)
def test_secure_boot(tree: NodeTree, secure_boot: bool | None, loaded: bool, status: Status, fragment: str) -> None:
    tree.efi(secure_boot)
    if loaded:
        tree.loaded_driver()
    assert_result(secureboot.check(tree.root), status, fragment)


def test_secure_boot_without_efi(tree: NodeTree) -> None:
    assert_result(secureboot.check(tree.root), Status.NA, "legacy BIOS")
