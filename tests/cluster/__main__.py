"""`python -m tests.cluster up --spec SPEC --state DIR` starts a cluster for the spec and prints
its kubeconfig's path (in DIR) last; `python -m tests.cluster down --state DIR` stops it and
removes DIR."""

from __future__ import annotations

import argparse
from pathlib import Path

from tests.cluster import control_plane


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.cluster", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="start a cluster for a spec; prints the kubeconfig path last")
    up.add_argument("--spec", type=Path, required=True, help="a gpustack spec (its pools become the nodes)")
    up.add_argument("--state", type=Path, required=True, help="folder for the cluster's files (must not exist)")
    down = commands.add_parser("down", help="stop the cluster and remove its state folder")
    down.add_argument("--state", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "up":
        print(control_plane.up(args.spec, args.state))
    else:
        control_plane.down(args.state)


if __name__ == "__main__":
    main()
