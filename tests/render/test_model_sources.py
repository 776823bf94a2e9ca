"""vLLM's model from S3, a Hugging Face model id (token from a Secret) or a PVC: exactly one,
validated, rendered into the Deployment, and the output lints clean with the spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from render_helpers import render_file, spec_document
from test_output_lint import lint

from gpustack.errors import SpecError
from gpustack.render import write
from gpustack.spec.load import load_spec
from gpustack.yamlio import dump

HUGGING_FACE = {"huggingFace": "Qwen/Qwen2.5-1.5B-Instruct", "revision": "main", "tokenSecret": "hf-token"}
PVC = {"pvc": "models", "path": "qwen/1.5b"}


def _write(folder: Path, model: dict[str, Any]) -> Path:
    path = folder / "spec.yaml"
    path.write_text(dump(spec_document(workloads=[{"type": "vllm", "name": "chat", "model": model}])), encoding="utf-8")
    return path


def _container(tree: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    import yaml

    deployment = next(
        doc for text in tree.values() if "kind: Deployment" in text
        for doc in yaml.safe_load_all(text) if doc and doc.get("kind") == "Deployment" and doc["metadata"]["name"] == "chat"
    )
    pod = deployment["spec"]["template"]["spec"]
    return pod, pod["containers"][0]


def test_a_hugging_face_model_reads_its_token_from_the_named_secret(tmp_path: Path) -> None:
    _, tree = render_file(_write(tmp_path, HUGGING_FACE))
    pod, container = _container(tree)
    assert container["args"][:2] == ["Qwen/Qwen2.5-1.5B-Instruct", "--revision=main"]
    assert "--load-format=runai_streamer" not in container["args"]
    token = {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "HF_TOKEN"}}}
    assert token in container["env"]
    assert {"name": "model-cache", "emptyDir": {}} in pod["volumes"]
    assert "--from-literal=HF_TOKEN=…" in tree["README.md"]


def test_a_pvc_model_is_mounted_read_only(tmp_path: Path) -> None:
    _, tree = render_file(_write(tmp_path, PVC))
    pod, container = _container(tree)
    assert container["args"][0] == "/models/qwen/1.5b"
    assert {"name": "model", "persistentVolumeClaim": {"claimName": "models", "readOnly": True}} in pod["volumes"]
    assert {"name": "model", "mountPath": "/models", "readOnly": True} in container["volumeMounts"]
    assert "PersistentVolumeClaim `default/models`" in tree["README.md"]


@pytest.mark.parametrize("model", [HUGGING_FACE, PVC], ids=["huggingFace", "pvc"])
def test_each_source_lints_clean_with_its_spec(capsys, tmp_path: Path, model: dict[str, Any]) -> None:
    spec = _write(tmp_path, model)
    write.write_tree(render_file(spec)[1], tmp_path / "out")
    code, out = lint(capsys, tmp_path / "out", str(spec))
    assert code == 0, out


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ({**PVC, **HUGGING_FACE}, "the model needs exactly one source"),
        ({}, "the model needs exactly one source"),
        ({"huggingFace": "Qwen/Qwen2.5; reboot"}, "should match pattern"),
        ({"huggingFace": "Qwen/Qwen2.5", "token": "hf_abc"}, "unknown key"),
        ({"pvc": "Models!"}, "is not a DNS-1123 subdomain"),
    ],
)
def test_a_model_without_exactly_one_valid_source_is_refused(tmp_path: Path, model: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as error:
        load_spec(str(_write(tmp_path, model)))
    assert any(p.path and p.path.startswith("spec.workloads[0].model") and message in p.message for p in error.value.problems), [
        str(p) for p in error.value.problems
    ]
