"""`gpustack render` through the CLI: exit codes, --check, -o -."""

from __future__ import annotations

import pytest
from render_helpers import EXAMPLES, REPO, cli
from ruamel.yaml import YAML

from gpustack.render import app

EXAMPLE = REPO / "examples" / "k3s-l4.yaml"


@pytest.fixture
def rendered_dir(tmp_path, capsys):
    """A fresh render of the K3s example."""
    target = tmp_path / "k3s-l4"
    assert cli(capsys, "render", str(EXAMPLE), "-o", str(target))[0] == 0
    return target


def test_check_passes_on_fresh_output(capsys, rendered_dir):
    code, out, err = cli(capsys, "render", str(EXAMPLE), "-o", str(rendered_dir), "--check")
    assert (code, out) == (0, "")
    assert "up to date" in err


def test_check_fails_with_a_diff_on_drift(capsys, rendered_dir):
    values = rendered_dir / "helm" / "nvidia-device-plugin.values.yaml"
    values.write_text(values.read_text().replace("runtimeClassName: nvidia", "runtimeClassName: runc"))
    (rendered_dir / "extra.yaml").write_text("x: 1\n")
    before = values.read_text()
    code, out, err = cli(capsys, "render", str(EXAMPLE), "-o", str(rendered_dir), "--check")
    assert code == 1
    assert "-runtimeClassName: runc\n+runtimeClassName: nvidia\n" in out
    assert f"--- a{rendered_dir.as_posix()}/extra.yaml\n+++ /dev/null" in out
    assert "stale" in err
    assert values.read_text() == before  # --check writes nothing


def test_default_folder_is_output_slash_name(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli(capsys, "render", str(EXAMPLE))[0] == 0
    assert (tmp_path / "output" / "k3s-l4" / "cluster" / "config.yaml").is_file()


@pytest.mark.parametrize("example", [EXAMPLES[0], EXAMPLES[-1]], ids=lambda p: p.stem)
def test_stdout_stream_holds_what_one_owner_applies(capsys, examples, example):
    code, out, _ = cli(capsys, "render", str(example), "-o", "-")
    assert code == 0
    documents = [d for d in YAML(typ="safe").load_all(out) if d is not None]
    rendered, _ = examples[example.stem]
    assert documents == list(app.stream_objects(rendered))
    if not rendered.ctx.stack.spec.gitops.argocd.enabled:
        assert documents == [obj for _, obj in rendered.objects()]
    assert all({"apiVersion", "kind", "metadata"} <= set(d) for d in documents)


def test_check_with_stdout_is_a_usage_error(capsys):
    code, _, err = cli(capsys, "render", str(EXAMPLE), "-o", "-", "--check")
    assert code == 2
    assert "--check" in err and "Traceback" not in err


def test_help_explains_the_command(capsys):
    code, out, _ = cli(capsys, "render", "--help")
    assert code == 0
    for words in ("SPEC", "--output", "--check", "output/<metadata.name>", "Exit codes"):
        assert words in out
