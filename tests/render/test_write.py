"""Atomic writes: the old output survives a failure, nothing lands outside the folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from render_helpers import REPO, cli

from gpustack.errors import GpustackError
from gpustack.lint.input.cache import ENVIRONMENT as CACHE_VARIABLE
from gpustack.render import write
from gpustack.render.stackfiles import readme


def tree(version: str, files: dict[str, str]) -> dict[str, str]:
    """``files`` and a generated README that lists them, as render writes it."""
    listing = "".join(f"- `{path}`\n" for path in sorted(files))
    return {readme.PATH: f"{readme.MARKER} {version} -->\n{readme.GENERATED}\n\n{listing}\n## Apply order\n", **files}


OLD = tree("old", {"helm/a.values.yaml": "a: 1\n", "stale.yaml": "x: 1\n"})
NEW = tree("new", {"helm/a.values.yaml": "a: 2\n", "manifests/b.yaml": "b: 1\n"})


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_replaces_the_whole_tree(tmp_path):
    target = tmp_path / "out" / "stack"
    write.write_tree(OLD, target)
    write.write_tree(NEW, target)
    assert snapshot(target) == {k: v.encode() for k, v in NEW.items()}
    assert sorted(p.name for p in target.parent.iterdir()) == ["stack"]


def test_failure_leaves_old_output_untouched_and_no_leftovers(tmp_path, monkeypatch):
    target = tmp_path / "stack"
    write.write_tree(OLD, target)
    before = snapshot(target)
    real_write = Path.write_text
    calls = []

    def failing(self, *args, **kwargs):
        calls.append(self)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real_write(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", failing)
    with pytest.raises(GpustackError, match="No space left"):
        write.write_tree(NEW, target)
    assert snapshot(target) == before
    assert [p.name for p in tmp_path.iterdir()] == ["stack"]


@pytest.mark.parametrize("path", ["../escape.yaml", "/etc/passwd", "a/../../b", "a//b", "./a", "", "a\\..\\b"])
def test_paths_outside_the_folder_are_refused(tmp_path, path):
    with pytest.raises(GpustackError, match="refusing to write"):
        write.write_tree({"README.md": "x\n", path: "x\n"}, tmp_path / "stack")
    assert list(tmp_path.iterdir()) == []


def test_a_folder_that_is_not_gpustack_output_is_never_replaced(tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n")
    with pytest.raises(GpustackError, match="holds no gpustack output"):
        write.write_tree(NEW, tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_an_empty_folder_is_filled(tmp_path):
    write.write_tree(NEW, tmp_path)
    assert snapshot(tmp_path) == {k: v.encode() for k, v in NEW.items()}


def test_diff_tree(tmp_path):
    write.write_tree(OLD, tmp_path / "s")
    diff = write.diff_tree(NEW, tmp_path / "s")
    assert f"--- a{(tmp_path / 's').as_posix()}/stale.yaml" in diff
    assert "+++ /dev/null" in diff and "--- /dev/null" in diff
    assert "-a: 1\n+a: 2\n" in diff
    assert write.diff_tree(OLD, tmp_path / "s") == ""



def test_lint_writes_nothing_into_a_rendered_folder_and_check_ignores_a_cache(tmp_path, capsys, monkeypatch):
    """Lint's cache goes to the user's cache folder; one left in the folder anyway (the old
    default ``.gpustack_cache``, or one a user put there with --cache-dir) is no drift."""
    target = tmp_path / "k3s-l4"
    shutil.copytree(REPO / "output" / "k3s-l4", target)
    monkeypatch.delenv(CACHE_VARIABLE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    before = sorted(p.name for p in target.rglob("*"))
    assert cli(capsys, "lint", str(target))[0] == 0
    assert sorted(p.name for p in target.rglob("*")) == before
    assert list((tmp_path / "xdg" / "gpustack" / "lint").iterdir())
    assert cli(capsys, "lint", "--cache-dir", str(target / "my-cache"), str(target))[0] == 0
    (target / ".gpustack_cache").mkdir()
    (target / ".gpustack_cache" / "entry").write_bytes(b"\0")
    code, out, err = cli(capsys, "render", str(REPO / "examples" / "k3s-l4.yaml"), "-o", str(target), "--check")
    assert (code, out) == (0, ""), err


@pytest.mark.parametrize("given", [".", "absolute"])
def test_the_current_folder_is_filled_and_replaced_in_place(tmp_path, monkeypatch, given):
    """``-o .`` and ``-o "$PWD"``: the folder keeps its place (the shell stays in it)."""
    here = tmp_path / "stack"
    here.mkdir()
    monkeypatch.chdir(here)
    target = Path(".") if given == "." else here
    write.write_tree(OLD, target)
    assert snapshot(here) == {k: v.encode() for k, v in OLD.items()}
    write.write_tree(NEW, target)
    assert snapshot(here) == {k: v.encode() for k, v in NEW.items()}
    assert Path.cwd() == here and Path(".").resolve() == here
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stack"]


def test_a_failure_in_place_puts_the_old_contents_back(tmp_path, monkeypatch):
    here = tmp_path / "stack"
    monkeypatch.chdir(tmp_path)
    write.write_tree(OLD, here)
    monkeypatch.chdir(here)
    before = snapshot(here)
    real_rename, calls = write.os.rename, []

    def failing(source, destination):
        calls.append(source)
        if len(calls) == 5:  # after the three old entries moved out and one new entry moved in
            raise OSError(28, "No space left on device")
        return real_rename(source, destination)

    monkeypatch.setattr(write.os, "rename", failing)
    with pytest.raises(GpustackError, match="No space left"):
        write.write_tree(NEW, Path("."))
    assert snapshot(here) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stack"]


def test_a_folder_holding_the_current_one_is_refused(tmp_path, monkeypatch):
    write.write_tree(OLD, tmp_path / "stack")
    monkeypatch.chdir(tmp_path / "stack" / "helm")
    with pytest.raises(GpustackError, match="the current folder is inside it"):
        write.write_tree(NEW, Path(".."))
    assert (tmp_path / "stack" / "stale.yaml").exists()


def test_render_into_the_current_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for output in (".", str(tmp_path)):
        code, _, err = cli(capsys, "render", str(REPO / "examples" / "k3s-l4.yaml"), "-o", output)
        assert code == 0, err
        assert Path.cwd() == tmp_path and (tmp_path / "README.md").is_file()
    assert cli(capsys, "render", str(REPO / "examples" / "k3s-l4.yaml"), "-o", ".", "--check")[0] == 0
