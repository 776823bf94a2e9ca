"""``cluster/k3s-auto-deploy.sh``: the whole stack into K3s' auto-deploy folder.

K3s applies every file in /var/lib/rancher/k3s/server/manifests when it starts and whenever
the file changes, like ``kubectl apply`` (https://docs.k3s.io/installation/packaged-components).
The script copies there, once, everything the cluster needs besides the host steps: the
releases' namespaces, the K3s HelmCharts (its helm-controller installs each chart) and every
file of ``manifests/``. K3s retries what fails until what it needs exists (a CRD, a namespace),
so no order is needed. The folder is flat and K3s wants unique RFC 1123 file names: each
file gets the stack's name and its own folder as prefix. Deleting a file there deletes nothing
in the cluster.
"""

from __future__ import annotations

import shlex
from pathlib import PurePosixPath

from gpustack.render.components.gitops import K3S_MANIFESTS
from gpustack.render.rendered import RELEASE_NAMESPACES, Rendered

PATH = "cluster/k3s-auto-deploy.sh"


def sources(rendered: Rendered) -> list[str]:
    """The stack files the script copies, in the order it copies them."""
    paths = [RELEASE_NAMESPACES] if rendered.namespaces else []
    paths += sorted(path for path in rendered.delivery if path.startswith("k3s/"))
    paths += [f"manifests/{name}.yaml" for name in rendered.manifests]
    return paths


def target(rendered: Rendered, source: str) -> str:
    """The file's name in the auto-deploy folder: ``<stack>-<folder>-<file>``."""
    path = PurePosixPath(source)
    return f"{rendered.ctx.stack.metadata.name}-{path.parent.name}-{path.name}"


def render(rendered: Rendered) -> str:
    lines = [
        "#!/bin/sh",
        f"# Stack {rendered.ctx.stack.metadata.name}: copies the namespaces, K3s HelmCharts and manifests into",
        "# K3s' auto-deploy folder; K3s applies them and keeps them applied. On a K3s server, from the",
        "# stack's folder: sudo sh cluster/k3s-auto-deploy.sh",
        "set -eu",
        'cd "$(dirname "$0")/.."',
        f"folder={K3S_MANIFESTS}",
        'mkdir -p "$folder"',
    ]
    lines += [f'install -m 600 {shlex.quote(s)} "$folder/{target(rendered, s)}"' for s in sources(rendered)]
    return "\n".join(lines) + "\n"
