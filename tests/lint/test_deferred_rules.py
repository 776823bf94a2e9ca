"""Deferred rules (``rules.DEFERRED``, ``registry.Deferred``): a run imports their modules only
where its input holds an object of their kinds, and finds exactly what it finds with every
rule imported.

- Each deferred rule is what its module's ``RULE`` says (scope, kinds) and reads nothing
  before it runs (no chart values, no set fact, not the rest of the set).
- A run over a Deployment imports none of them; a run over a PrometheusRule imports those of
  that kind and no other.
- The rule fixtures linted as one set, and each fixture alone, give the same findings, errors
  and notes with the deferred listing (the default) as with ``RULES``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import pytest

from gpustack.lint.engine import lint
from gpustack.lint.input.load import load_text
from gpustack.lint.policy.config import Config
from gpustack.lint.rules import DEFERRED, MODULES, RULES

from lint_support import TODAY, load_paths

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "rules" / "fixtures"

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: ml}
spec:
  template:
    spec:
      containers: [{name: vllm, image: vllm/vllm-openai:v0.6.3, resources: {limits: {nvidia.com/gpu: 1}}}]
"""
PROMETHEUS_RULE = """\
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: gpu, namespace: monitoring}
spec:
  groups: [{name: gpu, rules: [{alert: Hot, expr: DCGM_FI_DEV_GPU_TEMP > 85}]}]
"""


@pytest.mark.parametrize("rule_id", sorted(DEFERRED))
def test_a_deferred_rule_is_what_its_module_declares(rule_id: str) -> None:
    rule, (scope, kinds) = RULES[rule_id], DEFERRED[rule_id]
    assert (rule.scope, rule.kinds) == (scope, kinds)
    assert kinds and scope in ("object", "set")
    assert rule.values is None and rule.set_fact is None and rule.reads_set is False


def _imported_rules(tmp_path: Path, text: str) -> set[str]:
    """The ids of the rule modules a ``gpustack lint`` process imports for ``text``."""
    (tmp_path / "input.yaml").write_text(text, encoding="utf-8")
    script = dedent(f"""
        import sys
        from gpustack.lint.engine import lint
        from gpustack.lint.input.load import load_text
        lint(load_text("input.yaml", {text!r}))
        print(" ".join(name for name in sys.modules if name.startswith("gpustack.lint.rules.gs")))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=tmp_path)
    modules = {module: rule_id for rule_id, module in MODULES.items()}
    return {modules[name.rsplit(".", 1)[-1]] for name in done.stdout.split()}


def test_a_run_imports_a_deferred_rule_only_where_its_kinds_are(tmp_path: Path) -> None:
    assert _imported_rules(tmp_path, DEPLOYMENT) == set(MODULES) - set(DEFERRED)
    woken = {rule_id for rule_id, (_, kinds) in DEFERRED.items() if "PrometheusRule" in kinds}
    assert woken and _imported_rules(tmp_path, PROMETHEUS_RULE) == set(MODULES) - set(DEFERRED) | woken


def _outcome(report) -> tuple[object, ...]:  # type: ignore[no-untyped-def]
    findings = [(f.file, f.line, f.column, f.rule, f.severity, f.message, f.path, f.fix, f.edits) for f in report.findings]
    return tuple(findings), report.errors, report.notes


def test_the_fixtures_find_the_same_with_every_rule_imported() -> None:
    paths = sorted(str(path) for path in FIXTURES.glob("GS*/*.yaml"))
    loaded = load_paths(paths, jobs=1)
    assert _outcome(lint(loaded, today=TODAY)) == _outcome(lint(loaded, rules=RULES, today=TODAY))
    for path in paths:
        alone = load_text(path, Path(path).read_text(encoding="utf-8"))
        config = Config()
        assert _outcome(lint(alone, config, today=TODAY)) == _outcome(lint(alone, config, rules=RULES, today=TODAY)), path
