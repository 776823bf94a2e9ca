"""The differential tier: seeded scenarios linted and applied to the real control plane of
tests/cluster, the lint's verdicts compared with the scheduler's and the controllers'."""
