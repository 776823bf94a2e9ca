"""File-local rules (``Rule.file_local``) run one file at a time, with the set facts they
declare; what they find must be exactly what they find over the whole set, and what the lint
cache keeps of each file must follow every change that reaches it from another file.

- The same findings (every field), suppressions, errors and notes, file by file or over the
  whole set, on the rule fixtures linted as one set (with and without a spec), the rendered
  output, a generated corpus and, where present, ../shared's corpora: a rule that reads the
  set without saying so fails here.
- With a warm cache, a file that changes a set fact (a K3s config making nvidia the default
  runtime, a pod asking for a GeForce product) or a DRA claim another file's pod uses changes
  the findings in the other files exactly as a run without the cache does.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from gpustack.lint.context import LintContext
from gpustack.lint.engine import lint
from gpustack.lint.policy.config import Config
from gpustack.lint.registry import Rule
from gpustack.lint.report.model import Report
from gpustack.lint.rules import RULES

from lint_support import TODAY, json_report, load_paths

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "rules" / "fixtures"
SPEC = REPO / "tests" / "rules" / "specs" / "time-slicing-fleet.yaml"



def everything(report: Report) -> tuple[Any, ...]:
    """The report, with every field of every finding (a Finding compares by place and rule only)."""
    findings = [
        (f.file, f.line, f.column, f.rule, f.severity, f.message, f.object, f.path, f.fix, f.fixable, f.document, f.edits, f.root)
        for f in report.findings
    ]
    suppressed = [(s.finding.file, s.finding.line, s.finding.rule, s.finding.message, s.suppression) for s in report.suppressed]
    return findings, suppressed, report.errors, report.notes, report.files, report.objects


def file_by_file_and_whole(target: Path, config: Config, monkeypatch: pytest.MonkeyPatch) -> tuple[Report, Report]:
    loaded = load_paths([str(target)], jobs=1)
    by_file = lint(loaded, config, today=TODAY)
    with monkeypatch.context() as patched:
        patched.setattr(Rule, "file_local", lambda rule, ctx: False)
        whole = lint(loaded, config, today=TODAY)
    return by_file, whole


def test_most_rules_run_file_by_file() -> None:
    """Without a spec, every pod and object rule but GS005 (which reads the set with one) is
    file-local: the test below is about them."""
    ctx = LintContext((), ())
    local = sorted(rule.id for rule in RULES.values() if rule.file_local(ctx))
    assert len(local) >= 30 and "GS029" in local and "GS004" in local and "GS009" not in local


@pytest.mark.parametrize(
    "case",
    [
        "rule fixtures",
        "rule fixtures, spec",
        "rendered output, spec",
        "generated corpus",
        "shared corpus",
        "shared gitops corpus",
    ],
)
def test_file_local_rules_find_what_they_find_over_the_whole_set(
    case: str, generated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The rendered stacks lint clean, each apart (roots.py); the fleet's spec, which none of
    # them was rendered from, gives findings to compare.
    config = Config(spec=SPEC) if case.endswith(", spec") else Config()
    target = {
        "rule fixtures": FIXTURES,
        "rule fixtures, spec": FIXTURES,
        "rendered output, spec": REPO / "output",
        "generated corpus": generated,
        "shared corpus": REPO.parent / "shared" / "corpus",
        "shared gitops corpus": REPO.parent / "shared" / "corpus-gitops",
    }[case]
    if not target.exists():
        pytest.skip(f"{target} not present")
    by_file, whole = file_by_file_and_whole(target, config, monkeypatch)
    assert by_file.findings
    assert everything(by_file) == everything(whole)


def cached_and_plain(capsys: pytest.CaptureFixture[str], cache: Path, target: Path) -> tuple[str, str]:
    return json_report(capsys, "--cache-dir", str(cache), str(target)), json_report(capsys, "--no-cache", str(target))


K3S_NVIDIA_DEFAULT = "# /etc/rancher/k3s/config.yaml\ndefault-runtime: nvidia\n"
GEFORCE_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: geforce}
spec:
  nodeSelector: {nvidia.com/gpu.product: NVIDIA-GeForce-RTX-4090}
  containers:
  - {name: c, image: 'x:1', resources: {limits: {nvidia.com/gpu: 1}}}
"""


def test_a_set_fact_from_another_file_reaches_every_cached_file(
    generated: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    work = tmp_path / "repo"
    shutil.copytree(generated, work)
    cache = tmp_path / "cache"
    before, plain = cached_and_plain(capsys, cache, work)
    assert before == plain
    for name, text in (("k3s-config.yaml", K3S_NVIDIA_DEFAULT), ("geforce.yaml", GEFORCE_POD)):
        (work / name).write_text(text)
        after, plain = cached_and_plain(capsys, cache, work)
        assert after == plain != before
        before = after


CLAIMING_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: claims, namespace: ml}
spec:
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: device}
  containers:
  - name: c
    image: 'x:1'
    securityContext: {privileged: true}
    resources: {claims: [{name: gpu}]}
"""
TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: device, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: d
        exactly: {deviceClassName: %s}
"""


def test_a_dra_claim_in_another_file_decides_a_cached_files_pod(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The pod's file is unchanged; its claim's template, in another file, goes from a GPU
    device class to a network one: the pod stops being a GPU consumer (GS002 goes)."""
    work = tmp_path / "repo"
    work.mkdir()
    (work / "pod.yaml").write_text(CLAIMING_POD)
    (work / "template.yaml").write_text(TEMPLATE % "gpu.nvidia.com")
    cache = tmp_path / "cache"
    gpu, plain = cached_and_plain(capsys, cache, work)
    assert gpu == plain and '"GS002"' in gpu
    (work / "template.yaml").write_text(TEMPLATE % "netdev.google.com")
    network, plain = cached_and_plain(capsys, cache, work)
    assert network == plain and '"GS002"' not in network


@pytest.mark.parametrize("jobs", [1, 3])
@pytest.mark.parametrize("case", ["rule fixtures", "generated corpus"])
def test_units_the_loader_makes_are_those_the_engine_makes(case: str, jobs: int, generated: Path) -> None:
    """The loader makes each file's unit as it parses it, DRA claims taken as GPU claims
    (``Run.file_unit``); the engine keeps it only where the set's claims agree. The report is
    the same as when the engine makes every unit itself."""
    from gpustack.lint.engine import Run
    from gpustack.lint.input.discover import read_inputs
    from gpustack.lint.input.load import load_inputs

    target = FIXTURES if case == "rule fixtures" else generated
    run = Run(Config())
    with_units = load_inputs(read_inputs([str(target)]), jobs=jobs, work=run)
    assert with_units.units
    without = load_inputs(read_inputs([str(target)]), jobs=jobs)
    assert everything(lint(with_units, run=run, today=TODAY)) == everything(lint(without, Config(), today=TODAY))


def test_a_rule_that_fails_in_a_worker_is_reported_as_in_one_process(generated: Path) -> None:
    """A rule that raises while a worker makes a file's unit costs that unit: the main
    process lints the file again and reports the failure once, as one process does."""
    from collections.abc import Iterator

    from gpustack.lint.engine import Run
    from gpustack.lint.input.discover import read_inputs
    from gpustack.lint.input.load import load_inputs
    from gpustack.lint.model import Hit, Resource

    from lint_support import TEST_CATALOGUE, TEST_RULES

    def broken(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
        if resource.kind == "Service" and resource.file.endswith("0.yaml"):
            raise ZeroDivisionError("boom")
        yield from ()

    rules = {**TEST_RULES, "GS901": Rule("GS901", "object", broken)}
    reports = []
    for jobs in (1, 2):
        run = Run(Config(), rules=rules, catalogue=TEST_CATALOGUE)
        loaded = load_inputs(read_inputs([str(generated)]), jobs=jobs, work=run)
        reports.append(everything(lint(loaded, run=run, today=TODAY, jobs=jobs)))
    engine_alone = lint(load_paths([str(generated)], jobs=1), rules=rules, catalogue=TEST_CATALOGUE, today=TODAY)
    assert any("internal error: GS901" in error.message for error in engine_alone.errors)
    assert reports[0] == reports[1] == everything(engine_alone)
