"""The linter: load manifests, find pod specs, run rules, apply policy, report."""
