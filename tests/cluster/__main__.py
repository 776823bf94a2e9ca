"""`python -m tests.cluster up --spec SPEC --state DIR [--install]` starts a cluster for the spec
(its nodes the spec's inventory with the host facts of the rendered stack, DIR/stack) and prints
its kubeconfig's path (in DIR) last; with ``--install`` it first delivers the rendered stack as
the spec does (Flux's controllers for a Flux spec, else the README's apply order) and waits
until it converges, or exits 1 listing what did not start and why (the cluster stays up
for a look). `python -m tests.cluster down --state DIR` stops it and removes DIR."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

from tests.cluster import build, control_plane, install
from tests.cluster.deliver import deliver
from tests.cluster.api import Api
from tests.cluster.kubelet import load_machines
from tests.cluster.spec import load
from tests.cluster.support import Cluster


def _cluster(state: Path, spec: Path) -> Cluster:
    state = state.resolve()
    kubectl = str(build.build(load(spec).spec.cluster.kubernetesVersion) / "kubectl")
    return Cluster(state, state / "kubeconfig", Api.from_state(state), kubectl, list(load_machines(state).values()))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.cluster", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="start a cluster for a spec; prints the kubeconfig path last")
    up.add_argument("--spec", type=Path, required=True, help="a gpustack spec (its pools become the nodes)")
    up.add_argument("--state", type=Path, required=True, help="folder for the cluster's files (must not exist)")
    up.add_argument("--install", action="store_true",
                    help="install the rendered stack (DIR/stack) and wait until it converges; exit 1 if it does not")
    down = commands.add_parser("down", help="stop the cluster and remove its state folder")
    down.add_argument("--state", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "up":
        kubeconfig = control_plane.up(args.spec, args.state)
        if args.install:
            try:
                deliver(_cluster(args.state, args.spec), args.spec, load(args.spec))
            except (install.NotConverged, pytest.fail.Exception) as error:
                print(f"the stack did not converge:\n{error}", file=sys.stderr)
                print(kubeconfig)
                sys.exit(1)
        print(kubeconfig)
    else:
        control_plane.down(args.state)


if __name__ == "__main__":
    main()
