"""The fast path and the precise path give identical findings.

- Positions: the loader records where every key and item starts while it reads
  (``positions.Positions``); the precise path composes the file again with PyYAML and walks the
  node tree (``positions.Source.locate``). Every key and item of every object, and a missing key
  under every mapping, must be located at the same line and column by both, on every rule
  fixture, on a generated corpus and on YAML written to be awkward (anchors, aliases,
  merges, duplicate keys, flow style, quoted keys, Lists, embedded values).
- Findings: the engine over fast positions and over precise positions reports the same
  findings (rule, line, column, severity, message, object, path, fix) on every fixture
  with its context, and on the generated corpus.
- Processes: files read by worker processes (``load_files``) give the same resources,
  positions, errors and findings, in the same order, as one process.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpustack.lint import engine
from gpustack.lint.input.load import LoadResult, load_text
from gpustack.lint.model import Path as ObjectPath
from gpustack.lint.policy.config import Config
from gpustack.lint.report.model import Report

from lint_support import load_paths, with_precise_positions

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "rules" / "fixtures"
SPECS = REPO / "tests" / "rules" / "specs"


AWKWARD = """\
base: &base
  image: nvcr.io/nvidia/cuda:12.4.0
  resources: &res {limits: {nvidia.com/gpu: 1}}
apiVersion: apps/v1
kind: Deployment
metadata: {name: "awkward", namespace: ml, labels: {"gpu": on, 'quoted key': x}}
spec:
  template:
    spec:
      containers:
      - <<: *base
        name: a
        env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}, {name: B, value: "2"}]
      - <<: [*base, {name: shadowed, args: [--x]}]
        name: b
        resources: *res
      - *base
      initContainers:
        - name: dup
          name: dup-last
          image: "busybox"
      volumes:
      - {name: dev, hostPath: {path: /dev}}
      nodeSelector:
        ? feature.node.kubernetes.io/pci-0300_10de.present
        : "true"
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: in-list}
  spec:
    containers:
    - name: c
      image: x
      securityContext: {privileged: true}
      resources: {limits: {nvidia.com/gpu: 1}}
- apiVersion: helm.cattle.io/v1
  kind: HelmChart
  metadata: {name: hami, namespace: kube-system}
  spec:
    chart: hami
    valuesContent: |-
      devicePlugin:
        nvidiaNodeSelector:
          gpu: "on"
      scheduler:
        kubeScheduler: {imageTag: v1.31.0}
---
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "json"},
 "spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 2}}}]}}
"""


def fixture_files() -> list[Path]:
    return sorted(FIXTURES.glob("GS[0-9][0-9][0-9]/*.yaml"))


def _config(text: str) -> Config:
    first = text.split("\n", 1)[0]
    if first.startswith("# distribution:"):
        return Config(distribution=first.split(":", 1)[1].strip())
    if first.startswith("# spec:"):
        return Config(spec=SPECS / first.split(":", 1)[1].strip())
    return Config()


def paths_of(data: Any, path: ObjectPath = ()) -> Iterator[ObjectPath]:
    """Every key and item below ``data``, and a key that is missing under each mapping."""
    if isinstance(data, dict):
        yield (*path, "no-such-key")
        for key, value in data.items():
            yield (*path, key)
            yield from paths_of(value, (*path, key))
    elif isinstance(data, list):
        yield (*path, len(data))  # past the end
        for index, item in enumerate(data):
            yield (*path, index)
            yield from paths_of(item, (*path, index))


def assert_same_positions(loaded: LoadResult) -> int:
    precise = with_precise_positions(loaded)
    checked = 0
    for fast, slow in zip(loaded.resources, precise.resources, strict=True):
        for path in paths_of(fast.data):
            assert fast.locate(path) == slow.locate(path), (fast.file, fast.document, path)
            checked += 1
    return checked


def described(report: Report) -> list[tuple[Any, ...]]:
    return [
        (f.file, f.line, f.column, f.rule, f.severity, f.message, f.object, f.path, f.fix, f.fixable, f.document)
        for f in report.findings
    ]


def assert_same_findings(loaded: LoadResult, config: Config) -> int:
    fast = engine.lint(loaded, config)
    slow = engine.lint(with_precise_positions(loaded), config)
    assert fast.errors == slow.errors
    assert described(fast) == described(slow)
    return len(fast.findings)


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fixture_positions_and_findings_match_the_precise_path(path: Path) -> None:
    text = path.read_text("utf-8")
    loaded = load_text(str(path), text)
    assert_same_positions(loaded)
    assert_same_findings(loaded, _config(text))


def test_awkward_yaml_positions_and_findings_match_the_precise_path() -> None:
    loaded = load_text("awkward.yaml", AWKWARD)
    # The one error: initContainers[0] names itself twice (linted with the last name).
    assert [(error.message.split(":")[0], error.line) for error in loaded.errors] == [("duplicate key 'name' (first at line 19)", 20)]
    assert assert_same_positions(loaded) > 100
    assert assert_same_findings(loaded, Config()) > 0
    deployment = loaded.resources[0]
    # An alias stands where its anchor's node starts; a merged key where its source has it.
    assert deployment.locate(("spec", "template", "spec", "containers", 2)) == (1, 7)
    assert deployment.locate(("spec", "template", "spec", "containers", 0, "image")) == (2, 3)
    assert deployment.locate(("spec", "template", "spec", "containers", 1, "args")) == (14, 38)
    # The last of duplicate keys; a complex key; a path into a values string.
    assert deployment.locate(("spec", "template", "spec", "initContainers", 0, "name")) == (20, 11)
    assert deployment.locate(("spec", "template", "spec", "nodeSelector", "feature.node.kubernetes.io/pci-0300_10de.present")) == (25, 11)
    chart = loaded.resources[2]
    assert chart.locate(("spec", "valuesContent", "devicePlugin", "nvidiaNodeSelector", "gpu")) == (48, 11)


def test_generated_corpus_positions_and_findings_match_the_precise_path(generated: Path) -> None:
    loaded = load_paths([str(generated)])
    assert not loaded.errors and len(loaded.resources) == 400
    assert assert_same_positions(loaded) > 10_000
    assert assert_same_findings(loaded, Config()) > 100


def test_files_read_by_worker_processes_give_what_one_process_reads(generated: Path) -> None:
    """Workers send resources pickled, positions included: the same data, positions,
    errors, texts and findings as one process, in input order."""
    broken = generated / "zz-broken.yaml"
    broken.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [\n")
    try:
        one = load_paths([str(generated)], jobs=1)
        many = load_paths([str(generated)], jobs=3)
    finally:
        broken.unlink()
    assert [(r.file, r.document, r.document_path, r.source_comment, r.data) for r in many.resources] == [
        (r.file, r.document, r.document_path, r.source_comment, r.data) for r in one.resources
    ]
    assert many.errors == one.errors and len(one.errors) == 1
    assert list(many.texts.items()) == list(one.texts.items())
    for fast, slow in zip(many.resources, one.resources, strict=True):
        for path in paths_of(fast.data):
            assert fast.locate(path) == slow.locate(path)
    assert described(engine.lint(many, Config())) == described(engine.lint(one, Config()))


def test_large_inputs_are_spread_over_processes_unless_told_not_to(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpustack.lint.input import workers

    monkeypatch.delenv(workers.JOBS_VARIABLE, raising=False)
    assert workers.jobs_for(10, 10_000) == 1
    monkeypatch.setattr(workers, "idle_cpus", lambda: 2)
    assert workers.jobs_for(5_000, 50_000_000) == (2 if sys.platform.startswith("linux") else 1)
    monkeypatch.setattr(workers, "idle_cpus", lambda: 1)  # a busy machine: no worker
    assert workers.jobs_for(5_000, 50_000_000) == 1
    assert workers.jobs_for(workers.PARALLEL_FILES, 10_000, 2) == (2 if sys.platform.startswith("linux") else 1)
    monkeypatch.setenv(workers.JOBS_VARIABLE, "1")
    assert workers.jobs_for(5_000, 50_000_000) == 1
    chunks = workers.chunks([100] * 10, 2)
    assert [index for start, end in chunks for index in range(start, end)] == list(range(10))
    assert chunks == [(0, 5), (5, 10)]  # the main process takes MAIN_SHARE (0.95) to a worker's 1, up to the item that passes it
    assert workers.chunks([5_000_000, 1, 1], 3) == [(0, 1), (1, 3)]  # a large file: fewer chunks, none empty


def test_idle_cpus_are_those_other_runnable_threads_leave(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpustack.lint.input import workers

    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(workers, "_quota", lambda: None)  # no container limit
    monkeypatch.setattr(workers, "_early_look", None)  # none left by a lint run of another test
    monkeypatch.setattr(workers, "_running", lambda: 2)  # this run and one other
    assert workers.idle_cpus() == 3
    monkeypatch.setattr(workers, "_running", lambda: 9)
    assert workers.idle_cpus() == 1


def test_idle_cpus_take_the_lower_of_two_looks_and_wait_only_without_an_early_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gpustack.lint.input import workers

    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(workers, "_quota", lambda: None)
    slept: list[float] = []
    monkeypatch.setattr(workers.time, "sleep", slept.append)
    monkeypatch.setattr(workers, "_early_look", None)
    monkeypatch.setattr(workers, "_running", lambda: 3)
    assert workers.idle_cpus() == 2 and len(slept) == 1 and 0 < slept[0] <= workers.LOOK_GAP
    slept.clear()
    monkeypatch.setattr(workers, "_running", lambda: 1)
    workers.look_early()  # this run alone at start-up ...
    monkeypatch.setattr(workers, "_early_look", (workers._early_look[0] - 1, 1))  # ... a second ago
    monkeypatch.setattr(workers, "_running", lambda: 4)  # a thread that came and went: not other work
    assert workers.idle_cpus() == 4 and slept == []
    assert workers.idle_cpus() == 1 and len(slept) == 1  # the early look is used once
    monkeypatch.setattr(workers, "_early_look", (workers.time.monotonic() - workers.EARLY_LOOK_LIFE, 1))
    assert workers.idle_cpus() == 1  # too old to count


@pytest.mark.parametrize(
    ("files", "cpus"),
    [
        ({"cpu.max": "200000 100000\n"}, 2),
        ({"cpu.max": "150000 100000\n"}, 2),  # 1.5 CPUs: a second process still helps
        ({"cpu.max": "max 100000\n"}, 8),  # no limit
        ({"cpu.cfs_quota_us": "100000\n", "cpu.cfs_period_us": "100000\n"}, 1),  # cgroup v1
        ({"cpu.cfs_quota_us": "-1\n", "cpu.cfs_period_us": "100000\n"}, 8),
        ({}, 8),
    ],
)
def test_a_containers_cpu_limit_caps_the_processes(
    files: dict[str, str], cpus: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A container on a large host sees the host's CPUs: its cgroup's limit decides."""
    from gpustack.lint.input import workers

    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.setattr(
        workers,
        "_QUOTA_FILES",
        ((str(tmp_path / "cpu.max"),), (str(tmp_path / "cpu.cfs_quota_us"), str(tmp_path / "cpu.cfs_period_us"))),
    )
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    monkeypatch.setattr(workers, "_running", lambda: 1)  # this run alone
    assert workers.idle_cpus() == cpus
