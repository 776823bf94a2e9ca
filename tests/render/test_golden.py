"""The committed output/ trees are what the examples render to, byte for byte."""

from __future__ import annotations

from render_helpers import EXAMPLES, REPO, render_file

from gpustack.render import write


def test_every_example_has_a_committed_tree(examples):
    assert EXAMPLES, "no examples/*.yaml"
    for rendered, _ in examples.values():
        assert (REPO / "output" / rendered.ctx.stack.metadata.name).is_dir()


def test_committed_output_is_fresh(examples):
    stale = {}
    for rendered, files in examples.values():
        folder = REPO / "output" / rendered.ctx.stack.metadata.name
        diff = write.diff_tree(files, folder)
        if diff:
            stale[str(folder)] = diff
    assert not stale, "stale output; regenerate with `gpustack render examples/<name>.yaml`:\n" + "\n".join(
        stale.values()
    )


def test_render_twice_gives_identical_bytes(examples):
    path = EXAMPLES[0]
    _, again = render_file(path)
    assert again == examples[path.stem][1]


def test_tree_paths_are_sorted_and_newline_terminated(examples):
    for _, files in examples.values():
        assert list(files) == sorted(files)
        assert all(text.endswith("\n") for text in files.values())
