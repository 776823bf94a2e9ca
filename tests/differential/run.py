"""One differential run: scenarios linted, then applied batch by batch to one control plane.

The control plane starts once (tests/differential/base.yaml); each batch brings its scenarios'
nodes, namespaces and pods, waits until the scheduler has bound or given up on every pod,
and is removed before the next. The lint runs while the scheduler works on the batch.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from gpustack.lint.facts.from_spec import load_cluster
from tests.cluster.api import Api
from tests.differential.cluster import Batch
from tests.differential.compare import Outcome, outcome, rollout_outcome
from tests.differential.rollouts import roll
from tests.differential.dra import fits_on_a_node, generate_dra
from tests.differential.scenarios import Scenario, generate, generate_rollout
from tests.differential.verdicts import SPEC_FILE, verdicts

BASE_SPEC = Path(__file__).parent / "base.yaml"
BATCH = 50  # scenarios applied at once: ~150 nodes, ~125 pods


@dataclass
class Timings:
    lint: float = 0.0
    apply: float = 0.0
    schedule: float = 0.0
    clean: float = 0.0
    scenarios: int = 0
    batches: list[float] = field(default_factory=list)


def scenarios_of(seeds: Iterable[int], rollout_seeds: Iterable[int] = (), dra_seeds: Iterable[int] = ()) -> list[Scenario]:
    """The pod scenarios of ``seeds`` and ``dra_seeds`` (DRA claims), and the rollout scenarios of
    ``rollout_seeds``, interleaved: each batch then waits on a few rollouts while the scheduler
    works on its pods."""
    pods = [generate(seed) for seed in seeds]
    claims = [generate_dra(seed) for seed in dra_seeds]
    every = max(1, len(pods) // max(1, len(claims)))
    pods = [scenario for index, scenario in enumerate(pods) for scenario in
            [scenario, *([claims.pop(0)] if claims and index % every == every - 1 else [])]] + claims
    rollouts = [generate_rollout(seed) for seed in rollout_seeds]
    every = max(1, len(pods) // max(1, len(rollouts)))
    mixed: list[Scenario] = []
    for index, scenario in enumerate(pods):
        mixed.append(scenario)
        if index % every == every - 1 and rollouts:
            mixed.append(rollouts.pop(0))
    return mixed + rollouts


def run(api: Api, scenarios: list[Scenario], folder: Path, batch: int = BATCH) -> tuple[list[Outcome], Timings]:
    timings = Timings()
    outcomes: list[Outcome] = []
    for start in range(0, len(scenarios), batch):
        began = time.monotonic()
        outcomes += _batch(api, scenarios[start:start + batch], folder, timings)
        timings.batches.append(time.monotonic() - began)
        timings.scenarios += len(scenarios[start:start + batch])
    return outcomes, timings


def _batch(api: Api, scenarios: list[Scenario], folder: Path, timings: Timings) -> list[Outcome]:
    applied = Batch(api, scenarios)
    mark = time.monotonic()
    applied.apply()
    timings.apply += time.monotonic() - mark
    mark = time.monotonic()
    try:
        lint_began = time.monotonic()
        found = {s.name: verdicts(s, folder / s.name) for s in scenarios}
        judged = {s.name: load_cluster(str(folder / s.name / SPEC_FILE)).judges_label for s in scenarios}
        timings.lint += time.monotonic() - lint_began
        observed = applied.observe()
        rolled = roll(api, scenarios)
        timings.schedule += time.monotonic() - mark
    finally:
        clean_began = time.monotonic()
        applied.clean()
        timings.clean += time.monotonic() - clean_began
    return [
        rollout_outcome(s.seed, w, found[s.name][w["metadata"]["name"]], rolled[s.name], applied.own[s.name],
                        s.hami_pools())
        if w["kind"] == "Deployment" else
        replace(outcome(s.seed, w, found[s.name][w["metadata"]["name"]], observed[(s.name, w["metadata"]["name"])],
                        applied.own[s.name], judged[s.name], s.hami_pools(),
                        s.family == "d" and fits_on_a_node(s, w, applied.own[s.name])), family=s.family)
        for s in scenarios for w in s.workloads
    ]
