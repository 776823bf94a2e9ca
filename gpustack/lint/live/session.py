"""What a lint run takes from a live cluster (``--kubeconfig``, ``--context``, ``--cluster``):
the facts its rules judge by, the notes on what was read and how it differs from the spec, and
with ``--cluster`` the running workloads as the input."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpustack.lint.live.client import TIMEOUT_SECONDS, read_cluster
from gpustack.lint.live.compare import combined, inventory
from gpustack.lint.live.pools import live_facts
from gpustack.lint.live.workloads import workload_input
from gpustack.lint.model import Note

if TYPE_CHECKING:
    from gpustack.lint.facts.pools import ClusterFacts


@dataclass(frozen=True)
class Live:
    facts: ClusterFacts
    notes: tuple[Note, ...]
    workloads: tuple[str, bytes] | None  # with --cluster: the input


def read_live(
    kubeconfig: str | None,
    context: str | None,
    spec: ClusterFacts | None,
    *,
    workloads: bool,
    timeout: float | None = None,
) -> Live:
    """Read the cluster (a ``ClusterError`` says why it could not be) and combine it with the
    ``spec``'s facts, if any; ``timeout``: seconds a request may wait (None: the default)."""
    snapshot = read_cluster(kubeconfig, context, workloads=workloads, timeout=timeout or TIMEOUT_SECONDS)
    present = live_facts(snapshot)
    facts, differences = combined(spec, present)
    notes = [*inventory(snapshot, present), *differences]
    return Live(facts, tuple(Note(text) for text in notes), workload_input(snapshot) if workloads else None)
