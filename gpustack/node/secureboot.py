"""Secure Boot: when on, the kernel loads only modules signed by an enrolled key (``mokutil --sb-state``)."""

from __future__ import annotations

from gpustack.node import driver, upstream_docs
from gpustack.node.result import LayerResult, not_applicable, ok, problem
from gpustack.node.root import NodeRoot

LAYER = "secure-boot"
EFI = "/sys/firmware/efi"
EFIVARS = "/sys/firmware/efi/efivars"
# The EFI global variable GUID; the file holds 4 attribute bytes, then the value (1 = on).
SECURE_BOOT_VAR = "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"


def enabled(root: NodeRoot) -> bool | None:
    """``None`` when the machine did not boot through EFI (no Secure Boot at all)."""
    if not root.exists(EFI):
        return None
    value = root.read_bytes(f"{EFIVARS}/{SECURE_BOOT_VAR}")
    return value is not None and value[-1:] == b"\x01"


def check(root: NodeRoot) -> LayerResult:
    state = enabled(root)
    if state is None:
        return not_applicable(LAYER, "legacy BIOS boot: no Secure Boot")
    if not state:
        # EC2 boots EFI with Secure Boot off: nothing to do.
        return ok(LAYER, "EFI boot, Secure Boot disabled")
    if driver.is_loaded(root):
        return ok(LAYER, "Secure Boot enabled; the nvidia module is loaded, so it is signed")
    return problem(
        LAYER,
        "Secure Boot enabled and the nvidia module is not loaded: unsigned modules are refused",
        fix="enroll the DKMS signing key (`mokutil --import /var/lib/shim-signed/mok/MOK.der`, "
        "then confirm at the next boot) or turn Secure Boot off in the firmware",
        docs=upstream_docs.DRIVER,
    )
