"""The cluster-aware rules against the real kube-scheduler, on as many seeded scenarios as asked.

Starts the differential tier's control plane (tests/differential), runs the scenarios of seeds
``--seed`` … ``--seed + --count - 1`` in batches (and as many rollout and DRA scenarios as asked), prints the agreement table per rule (Markdown,
as in docs/accuracy.md), the outcome counts and the time taken, and lists every disagreement with
its seed (``tests.differential.scenarios.generate(seed)`` reproduces it). Exit 1 when any.

    python benchmarks/scheduler_agreement.py --seed 1000 --count 2000
"""

from __future__ import annotations

import argparse
from collections import Counter
import sys
import tempfile
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

from tests.cluster import control_plane  # noqa: E402 - after the path above
from tests.cluster.api import Api  # noqa: E402
from tests.differential.compare import markdown, table  # noqa: E402
from tests.differential.run import BASE_SPEC, BATCH, run, scenarios_of  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1000, help="first seed (the CI set is 0-299)")
    parser.add_argument("--count", type=int, default=1000, help="scenarios")
    parser.add_argument("--rollouts", type=int, default=None, help="rollout scenarios (default: a fifth of --count)")
    parser.add_argument("--dra", type=int, default=None, help="DRA claim scenarios (default: a quarter of --count)")
    parser.add_argument("--batch", type=int, default=BATCH, help="scenarios applied at once")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        state = Path(scratch) / "state"
        began = time.monotonic()
        control_plane.up(BASE_SPEC, state)
        started = time.monotonic() - began
        try:
            rollouts = args.count // 5 if args.rollouts is None else args.rollouts
            claims = args.count // 4 if args.dra is None else args.dra
            scenarios = scenarios_of(range(args.seed, args.seed + args.count), range(args.seed, args.seed + rollouts),
                                     range(args.seed, args.seed + claims))
            outcomes, timings = run(Api.from_state(state), scenarios, Path(scratch) / "lint", args.batch)
        finally:
            control_plane.down(state)
    rows = table(outcomes)
    total = rows[-1]
    print(markdown(rows))
    print()
    print(f"seeds from {args.seed}: {timings.scenarios} scenarios, {total['workloads']} workloads; "
          f"scheduled {total['scheduled']}, pending as a rule said {total['confirmed']}, "
          f"waiting on GPUs other pods hold {total['contended']}, pending on labels the spec does not describe "
          f"{total['unjudged']}, refused only by HAMi's per-card fit {total['hami-only']}, Deployments that never "
          f"ran without GS005 {total['never ran']}")
    print(f"control plane up in {started:.1f} s; {len(timings.batches)} batches of {args.batch}: "
          f"{sum(timings.batches):.1f} s (apply {timings.apply:.1f}, lint {timings.lint:.1f}, "
          f"scheduler {timings.schedule:.1f}, clean-up {timings.clean:.1f})")
    dra = Counter(o.kind for o in outcomes if o.family == "d")
    print(f"of them DRA claims: {sum(dra.values())} pods; scheduled {dra['scheduled']}, pending as a rule said "
          f"{dra['confirmed']}, pending where no rule judges the claim {dra['missed']}, waiting on devices other "
          f"pods hold {dra['contended']}")
    disagreements = [o for o in outcomes if o.disagrees]
    for item in disagreements:
        family = "rollout seed" if item.rollout else {"d": "DRA seed"}.get(item.family, "seed")
        print(f"DISAGREEMENT {family} {item.scenario} {item.workload}: {item.kind} {sorted(item.rules)} {item.message}")
    gaps = [o for o in outcomes if o.kind == "missed" and not o.disagrees]
    for item in gaps:
        print(f"GAP DRA seed {item.scenario} {item.workload}: no rule; {item.message}")
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
