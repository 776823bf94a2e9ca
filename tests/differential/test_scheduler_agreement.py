"""The cluster-aware rules against the real kube-scheduler and Deployment controller: 0
disagreements on the fixed seeds (pod scenarios 0-299, rollouts 0-59, DRA claims 0-79) and on
every scenario that once disagreed (regressions.yaml). A DRA pod the scheduler cannot place
and no rule explains is a coverage gap (compare.DRA_GAP), counted in the table, not failed.

One control plane for the module (tests/differential/base.yaml); the scenarios are applied in
batches (tests/differential/run.py). ``python benchmarks/scheduler_agreement.py`` runs more.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.cluster.support import Cluster, start
from tests.differential.cluster import applied
from tests.differential.compare import markdown, table
from tests.differential.run import BASE_SPEC, run, scenarios_of
from tests.differential.dra import generate_dra
from tests.differential.scenarios import Scenario, generate
from tests.differential.verdicts import verdicts

FIXED_SEEDS = range(300)
ROLLOUT_SEEDS = range(60)
DRA_SEEDS = range(80)
REGRESSIONS = Path(__file__).parent / "regressions.yaml"


def regression_seeds(key: str) -> list[int]:
    """The seeds of regressions.yaml under ``key``: ``seed`` (pods), ``rollout_seed`` or ``dra_seed``."""
    return [entry[key] for entry in yaml.safe_load(REGRESSIONS.read_text()) if key in entry]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    generator = start(BASE_SPEC, tmp_path_factory.mktemp("differential") / "state")
    yield next(generator)
    generator.close()


@pytest.mark.cluster
def test_the_rules_agree_with_the_scheduler_on_the_fixed_seeds(cluster: Cluster, tmp_path: Path) -> None:
    seeds = sorted({*FIXED_SEEDS, *regression_seeds("seed")})
    rollouts = sorted({*ROLLOUT_SEEDS, *regression_seeds("rollout_seed")})
    claims = sorted({*DRA_SEEDS, *regression_seeds("dra_seed")})
    outcomes, _ = run(cluster.api, scenarios_of(seeds, rollouts, claims), tmp_path)
    rows = table(outcomes)
    disagreements = [o for o in outcomes if o.disagrees]
    assert not disagreements, markdown(rows) + "\n" + "\n".join(map(str, disagreements))
    total = rows[-1]
    # The set exercises both sides: findings the scheduler confirms, and pods it schedules.
    assert total["confirmed"] > 200 and total["scheduled"] > 100, markdown(rows)
    assert all(row["findings"] for row in rows if row["rule"] in ("GS001", "GS005", "GS024", "GS026", "GS027", "GS028", "GS030", "GS063"))
    # The DRA scenarios: claims the scheduler allocates, claims it cannot that GS063 (or GS030)
    # names, and claims it cannot that no rule judges (MIG devices, the scenarios' MIG layouts).
    dra = Counter(o.kind for o in outcomes if o.family == "d")
    assert dra["scheduled"] > 50 and dra["missed"] > 5 and dra["confirmed"] > 40, dra


def isolated(scenario: Scenario) -> Scenario:
    return Scenario(scenario.seed, scenario.spec, [applied(scenario, w) for w in scenario.workloads], scenario.claims,
                    scenario.family, scenario.mig)


@pytest.mark.parametrize("seed", range(0, 300, 7))
def test_the_isolation_added_to_the_applied_copy_changes_no_verdict(seed: int, tmp_path: Path) -> None:
    scenario = generate(seed)
    assert verdicts(isolated(scenario), tmp_path / "applied") == verdicts(scenario, tmp_path / "linted")


@pytest.mark.parametrize("seed", range(0, 80, 7))
def test_the_isolation_changes_no_verdict_on_dra_scenarios(seed: int, tmp_path: Path) -> None:
    scenario = generate_dra(seed)
    assert verdicts(isolated(scenario), tmp_path / "applied") == verdicts(scenario, tmp_path / "linted")
