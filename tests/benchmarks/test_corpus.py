"""The synthetic lint corpus: deterministic, the sizes asked for, valid Kubernetes YAML."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import pytest

import corpus

yaml = pytest.importorskip("yaml")
Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # YAML 1.1, as Kubernetes reads it

SIZES = [(2_000, 200), (10_000, 1_000)]


@dataclass(frozen=True)
class Generated:
    docs: int
    files: int
    texts: dict[str, str]
    parsed: dict[str, list[object]]


@pytest.fixture(scope="module", params=SIZES, ids=lambda size: f"{size[0]}docs")
def generated(request: pytest.FixtureRequest) -> Generated:
    docs, files = request.param
    texts = corpus.generate(1, docs, files)
    return Generated(docs, files, texts, {path: parse(text) for path, text in texts.items()})


def parse(text: str) -> list[object]:
    return list(yaml.load_all(text, Loader=Loader))


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    first = corpus.corpus_dir(300, 30, seed=7, cache=tmp_path / "a")
    second = corpus.corpus_dir(300, 30, seed=7, cache=tmp_path / "b")
    files = sorted(path.relative_to(first) for path in first.rglob("*.yaml"))
    assert files == sorted(path.relative_to(second) for path in second.rglob("*.yaml"))
    assert all((first / f).read_bytes() == (second / f).read_bytes() for f in files)
    assert corpus.generate(8, 300, 30) != corpus.generate(7, 300, 30)


def test_cached_corpus_is_reused(tmp_path: Path) -> None:
    folder = corpus.corpus_dir(20, 4, cache=tmp_path)
    marker = folder / "kept.txt"
    marker.write_text("")
    assert corpus.corpus_dir(20, 4, cache=tmp_path) == folder
    assert marker.exists()
    assert [p.name for p in tmp_path.iterdir()] == [folder.name]  # no partial folder left


def test_requested_counts(generated: Generated) -> None:
    assert len(generated.texts) == generated.files
    assert sum(len(documents) for documents in generated.parsed.values()) == generated.docs


def test_every_document_is_a_named_kubernetes_object(generated: Generated) -> None:
    for path, documents in generated.parsed.items():
        for document in documents:
            assert isinstance(document, dict), path
            assert isinstance(document.get("apiVersion"), str), path
            assert isinstance(document.get("kind"), str), path
            assert isinstance(document["metadata"]["name"], str), path


def test_text_reads_back_as_the_generated_objects() -> None:
    """The emitter quotes whatever YAML 1.1 would read as something else ("on", "1", ...)."""
    texts = corpus.generate(3, 500, 50)
    objects = [document for text in texts.values() for document in parse(text)]
    assert objects == corpus.documents(random.Random(3), 500)


def test_kinds_and_pitfalls_are_all_there(generated: Generated) -> None:
    everything = "".join(generated.texts.values())
    kinds = {line.split(": ", 1)[1] for line in everything.splitlines() if line.startswith("kind: ")}
    assert kinds >= {
        "Deployment", "Job", "Pod", "DaemonSet", "StatefulSet", "CronJob", "PrometheusRule", "ResourceClaim"
    }
    for pitfall in (
        "feature.node.kubernetes.io/pci-0300_10de.present",
        "privileged: true",
        "path: /dev\n",
        "nvidia.com/gpumem",
        "--gpu-memory-utilization 0.28",
        "type: RollingUpdate",
        "value: all\n",
        "k8s-device-plugin:latest",
        "--load-format=runai_streamer",
        "on(gpu)",
        "# Source: ",
    ):
        assert pitfall in everything, pitfall
