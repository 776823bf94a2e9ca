"""Bad input never crashes gpustack or loses data: one test per way it was seen to, and a fuzz test.

Each case goes through the command line (``cli.main``) where the user would meet it: a
message naming the file (and line), the documented exit code, no traceback, and nothing
that gpustack did not write is deleted or changed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gpustack import cli
from gpustack.render import readme, write

REPO = Path(__file__).resolve().parents[1]
SPEC = (REPO / "examples" / "k3s-l4.yaml").read_text(encoding="utf-8")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``gpustack ARGS``: exit code, standard output, standard error (never a traceback)."""
    with pytest.raises(SystemExit) as exit_info:
        cli.main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err, err
    code = exit_info.value.code
    return (0 if code is None else code), out, err


def rendered(version: str, files: dict[str, str]) -> dict[str, str]:
    """``files`` and a generated README that lists them, as render writes it."""
    listing = "".join(f"- `{path}`\n" for path in sorted(files))
    return {readme.PATH: f"{readme.MARKER} {version} -->\n{readme.GENERATED}\n\n{listing}\n## Apply order\n", **files}


OLD = rendered("old", {"manifests/a.yaml": "a: 1\n", "helm/x.values.yaml": "x: 1\n"})
NEW = rendered("new", {"manifests/a.yaml": "a: 2\n"})


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# --- render never deletes what it did not write ---------------------------------------------


@pytest.mark.parametrize(
    ("added", "named"),
    [
        ({"manifests/overlay.yaml": "kind: Patch\n"}, "manifests/overlay.yaml"),
        ({".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n"}, ".git/"),
        ({"notes/todo.md": "mine\n"}, "notes/"),
    ],
)
def test_render_refuses_a_folder_holding_files_it_did_not_write(tmp_path, added, named):
    target = tmp_path / "stack"
    write.write_tree(OLD, target)
    for path, text in added.items():
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        (target / path).write_text(text)
    before = snapshot(target)
    with pytest.raises(write.GpustackError, match="holds files gpustack did not write") as error:
        write.write_tree(NEW, target)
    assert named in str(error.value)
    assert snapshot(target) == before


def test_render_refuses_a_link_in_its_folder(tmp_path):
    target = tmp_path / "stack"
    write.write_tree(OLD, target)
    (tmp_path / "elsewhere.yaml").write_text("mine\n")
    (target / "manifests" / "a.yaml").unlink()
    (target / "manifests" / "a.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    with pytest.raises(write.GpustackError, match="manifests/a.yaml"):
        write.write_tree(NEW, target)
    assert (tmp_path / "elsewhere.yaml").read_text() == "mine\n"


def test_render_replaces_its_own_output_and_lints_cache(tmp_path):
    target = tmp_path / "stack"
    write.write_tree(OLD, target)
    (target / ".gpustack_cache").mkdir()
    (target / ".gpustack_cache" / "entry").write_bytes(b"\0")
    write.write_tree(NEW, target)
    assert snapshot(target) == {path: text.encode() for path, text in NEW.items()}


def test_render_command_names_the_foreign_files_and_exits_2(tmp_path, capsys, monkeypatch):
    """Through the command: refused before cdk8s is even started."""
    target = tmp_path / "stack"
    write.write_tree(OLD, target)
    (target / "kustomization.yaml").write_text("resources: [manifests]\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    monkeypatch.setattr("gpustack.render.app.render", lambda ctx: None)
    monkeypatch.setattr("gpustack.render.app.tree", lambda rendered: dict(NEW))
    monkeypatch.setattr("gpustack.commands.render.require_render_tools", lambda: None)
    code, _, err = run(capsys, "render", str(spec), "-o", str(target))
    assert code == 2
    assert f"{target} holds files gpustack did not write: kustomization.yaml" in err
    assert (target / "kustomization.yaml").read_text() == "resources: [manifests]\n"


_KILLED_RENDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from gpustack.render import write

    real = Path.write_text
    def slow(self, *args, **kwargs):
        real(self, *args, **kwargs)
        print("writing", flush=True)
        time.sleep(60)
    Path.write_text = slow
    write.write_tree({"README.md": "x\\n"}, Path(sys.argv[1]))
    """
)


def test_a_killed_render_leaves_temporary_folders_the_next_one_removes(tmp_path):
    target = tmp_path / "out" / "stack"
    write.write_tree(OLD, target)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [sys.executable, "-c", _KILLED_RENDER, str(target)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert process.stdout is not None and process.stdout.readline() == "writing\n"
    # While that render runs, another one leaves its temporary folder alone.
    live = [p.name for p in (tmp_path / "out").iterdir() if p.name != "stack"]
    assert len(live) == 1 and live[0].startswith(".stack.") and live[0].endswith(".tmp")
    write.write_tree(OLD, tmp_path / "out" / "stack")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(["stack", *live])
    process.send_signal(signal.SIGKILL)
    process.wait()
    write.write_tree(NEW, target)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["stack"]
    assert snapshot(target) == {path: text.encode() for path, text in NEW.items()}


def test_a_stale_old_tree_is_removed(tmp_path):
    """The previous output, renamed aside when the render was killed before it was removed."""
    write.write_tree(OLD, tmp_path / ".stack.abcd1234.old")
    write.write_tree(NEW, tmp_path / "stack")
    assert [p.name for p in tmp_path.iterdir()] == ["stack"]


def test_render_with_an_unusable_tmpdir_says_so(tmp_path, capsys, monkeypatch):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))
    monkeypatch.setattr("gpustack.commands.render.require_render_tools", lambda: None)
    started = time.monotonic()
    code, _, err = run(capsys, "render", str(spec), "-o", str(tmp_path / "out"))
    assert code == 2
    assert f"TMPDIR={tmp_path / 'missing'} is not a writable folder" in err
    assert time.monotonic() - started < 30
    assert not (tmp_path / "out").exists()
