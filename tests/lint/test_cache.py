"""The lint cache: the same findings cached or not, and never in the way.

- Same output: every rule fixture folder, the examples' output and a generated corpus give
  byte-identical JSON reports with no cache, with an empty cache, with a warm one, and with
  one file changed (documents of the others from the cache); documents restored from the
  cache are located exactly as freshly read ones (the precise path is the reference).
- Never in the way: a damaged entry is ignored and rewritten, a damaged database replaced;
  an unwritable place, a read-only cache and a symlinked folder mean no cache, silently; the
  folder holds a .gitignore; it is bounded, the least recently used going first; concurrent
  runs share it; --fix never applies a stored result.
"""

from __future__ import annotations

import marshal
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gpustack import shipped
from gpustack.lint.input import cache as cache_module
from gpustack.lint.input import keys
from gpustack.lint.input.cache import Cache
from gpustack.lint.input.discover import read_inputs
from gpustack.lint.input.load import load_inputs

from lint_support import gpustack, json_report

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "rules" / "fixtures"
SPECS = REPO / "tests" / "rules" / "specs"

from test_fast_path import AWKWARD, assert_same_positions


def entries(folder: Path, kind: str = "") -> list[str]:
    """The keys of the entries stored in ``folder`` (of one kind: documents, pods, results, output)."""
    with sqlite3.connect(folder / cache_module.DATABASE) as database:
        keys = [key for (key,) in database.execute("SELECT key FROM entries ORDER BY key")]
    return [key for key in keys if key.startswith(f"{kind}:" if kind else "")]


CASES = {
    "rule fixtures": (FIXTURES, ()),
    "rule fixtures, spec": (FIXTURES, ("--spec", str(SPECS / "time-slicing-fleet.yaml"))),
    "rendered output": (REPO / "output", ()),
}


@pytest.mark.parametrize("case", CASES)
def test_same_report_without_cache_cold_and_warm(case: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target, options = CASES[case]
    if "--spec" in options and not Path(options[1]).exists():
        pytest.skip(f"{options[1]} not present")
    folder = tmp_path / "cache"
    plain = json_report(capsys, "--no-cache", *options, str(target))
    assert json_report(capsys, "--cache-dir", str(folder), *options, str(target)) == plain  # cold: parses, writes
    assert entries(folder)
    assert json_report(capsys, "--cache-dir", str(folder), *options, str(target)) == plain  # warm: the stored report
    assert not list(target.rglob(".gpustack_cache"))  # --cache-dir: nothing beside the input


@pytest.mark.parametrize("layout", ["one repository", "with a spec", "two git repositories"])
def test_same_report_when_one_file_changed_among_many(
    layout: str, generated: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Findings of the unchanged files come from the cache (each file's unit; with a spec,
    GS005 reads the whole set; with two repositories, each is a root of its own)."""
    work = tmp_path / "repo"
    shutil.copytree(generated, work)
    options: tuple[str, ...] = ()
    if layout == "with a spec":
        options = ("--spec", str(SPECS / "time-slicing-fleet.yaml"))
    if layout == "two git repositories":
        for folder in sorted(path for path in work.iterdir() if path.is_dir())[:2]:
            (folder / ".git").mkdir()
    folder = tmp_path / "cache"

    def report(*args: str) -> str:
        return json_report(capsys, *options, *args)

    assert report("--cache-dir", str(folder), str(work)) == report("--no-cache", str(work))
    files = sorted(work.rglob("*.yaml"))
    changed = files[len(files) // 2]
    # A finding added, one document dropped, positions shifted below the change.
    text = changed.read_text()
    changed.write_text(
        "# changed\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: new}\nspec:\n  containers:\n"
        "  - {name: c, image: 'x:1', securityContext: {privileged: true}, resources: {limits: {nvidia.com/gpu: 1}}}\n"
        "---\n" + text.split("\n---\n", 1)[-1]
    )
    warm = report("--cache-dir", str(folder), str(work))
    assert warm == report("--no-cache", str(work))
    assert '"line": 11' in warm or str(changed) in warm


@pytest.mark.parametrize(
    "options",
    [
        ("--format", "text"),
        ("--format", "sarif", "--docs-url", "https://example.org/rules"),
        ("--format", "github", "--show-suppressed"),
        ("--format", "json", "--fail-on", "error"),
        ("--format", "json", "--fail-if-no-objects", "--select", "GS001"),
    ],
)
def test_a_stored_output_is_what_the_run_prints_without_a_cache(
    options: tuple[str, ...], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Runs that print the same report another way (format, options) each get their own
    output, with the exit status it goes with; warm runs print it byte for byte."""
    folder = tmp_path / "cache"
    target = str(FIXTURES / "GS001")
    plain = gpustack(capsys, "lint", "--no-cache", *options, target)
    for run in ("cold", "warm", "warm again"):
        assert gpustack(capsys, "lint", "--cache-dir", str(folder), *options, target) == plain, run
    assert len(entries(folder, "output")) == 1


def test_one_cache_holds_the_outputs_of_several_formats(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    target = str(FIXTURES / "GS001")
    formats = ("text", "json", "sarif", "github")
    plain = {name: gpustack(capsys, "lint", "--no-cache", "--format", name, target) for name in formats}
    for _ in range(2):
        for name in formats:
            assert gpustack(capsys, "lint", "--cache-dir", str(folder), "--format", name, target) == plain[name]
    assert len(entries(folder, "output")) == len(formats)


def test_an_edited_policy_is_a_new_fingerprint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Reports carry the policies' names, severities and remediations: in a checkout the
    policies sit outside the package, and an edit to one must not print a stored report."""
    real_data_dir = shipped.data_dir
    policies = tmp_path / "policies"
    shutil.copytree(real_data_dir("policies"), policies)
    monkeypatch.setattr(shipped, "data_dir", lambda name: policies if name == "policies" else real_data_dir(name))

    def fingerprint() -> str:
        monkeypatch.setattr(keys, "_fingerprint", None)
        return keys.code_fingerprint()

    before = fingerprint()
    assert fingerprint() == before
    policy = policies / "GS001.yaml"
    policy.write_text(policy.read_text().replace("severity: error", "severity: warning"))
    assert fingerprint() != before


def test_documents_restored_from_the_cache_are_located_as_when_read(generated: Path, tmp_path: Path) -> None:
    awkward = tmp_path / "awkward.yaml"
    awkward.write_text(AWKWARD)
    store = Cache(tmp_path / "cache")
    paths = [str(awkward), str(generated)]
    fresh = load_inputs(read_inputs(paths), cache=store)
    store.close()
    restored = load_inputs(read_inputs(paths), cache=Cache(tmp_path / "cache"))
    assert len(entries(tmp_path / "cache", "documents")) == len(fresh.texts)
    assert [(r.file, r.document, r.document_path, r.source_comment, r.data) for r in restored.resources] == [
        (r.file, r.document, r.document_path, r.source_comment, r.data) for r in fresh.resources
    ]
    assert restored.errors == fresh.errors and restored.texts == fresh.texts
    assert assert_same_positions(restored) > 10_000


def test_worker_processes_store_what_they_parse(generated: Path, tmp_path: Path) -> None:
    one = load_inputs(read_inputs([str(generated)]), jobs=1)
    parallel = load_inputs(read_inputs([str(generated)]), jobs=3, cache=(writing := Cache(tmp_path / "cache")))
    writing.close()
    stored = load_inputs(read_inputs([str(generated)]), jobs=1, cache=Cache(tmp_path / "cache"))
    assert len(entries(tmp_path / "cache", "documents")) == len(one.texts)
    for loaded in (parallel, stored):
        assert [(r.file, r.data, r.locate(("spec",))) for r in loaded.resources] == [
            (r.file, r.data, r.locate(("spec",))) for r in one.resources
        ]


def test_damaged_entries_are_ignored_and_rewritten(
    generated: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "cache"
    plain = json_report(capsys, "--no-cache", str(generated))
    json_report(capsys, "--cache-dir", str(folder), str(generated))
    with sqlite3.connect(folder / cache_module.DATABASE) as database:
        database.execute("UPDATE entries SET value = CASE WHEN rowid % 2 THEN x'00' ELSE substr(value, 1, 10) END")
    assert json_report(capsys, "--cache-dir", str(folder), str(generated)) == plain
    with sqlite3.connect(folder / cache_module.DATABASE) as database:
        rows = database.execute("SELECT key, value FROM entries").fetchall()
    assert rows and all(value != b"\x00" for _, value in rows)  # every one written again: whole,
    for _, value in rows:
        marshal.loads(value)  # not cut short (a fact may be empty, as a set with no multi-GPU pod's)
    assert json_report(capsys, "--cache-dir", str(folder), str(generated)) == plain


@pytest.mark.parametrize(
    "positions",
    [b"\xff not marshal", marshal.dumps([[1, 2]]), marshal.dumps("a string")],
    ids=["unreadable", "too few", "not a list"],
)
def test_damaged_positions_are_found_again_in_the_text(
    positions: bytes, generated: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Each document's positions are encoded apart and read on the first locate: positions
    that cannot be read, or do not fit the document, are found in the file's text instead."""
    folder = tmp_path / "cache"
    plain = json_report(capsys, "--no-cache", str(generated))
    json_report(capsys, "--cache-dir", str(folder), str(generated))
    with sqlite3.connect(folder / cache_module.DATABASE) as database:
        rows = database.execute("SELECT key, value FROM entries WHERE key LIKE 'documents:%'").fetchall()
        for key, value in rows:
            kind, items = marshal.loads(value)
            damaged = (kind, tuple((*item[:7], positions, *item[8:]) for item in items) if kind == "documents" else items)
            database.execute("UPDATE entries SET value = ? WHERE key = ?", (marshal.dumps(damaged), key))
        database.execute("DELETE FROM entries WHERE key NOT LIKE 'documents:%'")  # every finding located anew
    assert json_report(capsys, "--cache-dir", str(folder), str(generated)) == plain


def test_a_damaged_database_is_replaced(generated: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    plain = json_report(capsys, "--no-cache", str(generated))
    json_report(capsys, "--cache-dir", str(folder), str(generated))
    (folder / cache_module.DATABASE).write_bytes(b"not a database\n" * 100)
    assert json_report(capsys, "--cache-dir", str(folder), str(generated)) == plain
    assert entries(folder, "documents")
    assert json_report(capsys, "--cache-dir", str(folder), str(generated)) == plain


def test_an_unwritable_place_means_no_cache_silently(
    generated: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    plain = json_report(capsys, "--no-cache", str(generated))
    code, out, err = gpustack(capsys, "lint", "--format", "json", "--cache-dir", str(blocker / "cache"), str(generated))
    assert (out, err) == (plain, "") and code == 1


def test_a_read_only_cache_is_read_and_never_written(
    generated: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "cache"
    plain = json_report(capsys, "--cache-dir", str(folder), str(generated))
    database = folder / cache_module.DATABASE
    before = database.read_bytes()
    connect = sqlite3.connect

    def read_only(path: str, **options: object) -> sqlite3.Connection:
        return connect(f"file:{path}?mode=ro", uri=True, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlite3, "connect", read_only)
    changed = sorted(generated.rglob("*.yaml"))[0]
    original = changed.read_text()
    try:
        changed.write_text(original + "# changed\n")
        code, out, err = gpustack(capsys, "lint", "--format", "json", "--cache-dir", str(folder), str(generated))
    finally:
        changed.write_text(original)
    assert (code, err) == (1, "") and out == plain
    assert database.read_bytes() == before


def test_a_symlinked_cache_folder_is_never_followed(
    generated: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "cache").symlink_to(elsewhere)
    plain = json_report(capsys, "--no-cache", str(generated))
    assert json_report(capsys, "--cache-dir", str(tmp_path / "cache"), str(generated)) == plain
    assert list(elsewhere.iterdir()) == []


def test_the_default_folder_is_the_users_cache_folder_keyed_by_the_repository(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing is written into the linted tree (as ruff and mypy allow): the cache goes to
    $XDG_CACHE_HOME/gpustack/lint/<digest of the repository>, one per repository."""
    monkeypatch.delenv(cache_module.ENVIRONMENT, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    repo = tmp_path / "repo"
    for folder in ("deploy", "other"):
        (repo / folder).mkdir(parents=True)
        shutil.copy(FIXTURES / "GS002" / "fires-seed-privileged-hostpath-dev.yaml", repo / folder / "pod.yaml")
    (repo / ".gpustack.yaml").write_text("failOn: error\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    json_report(capsys, str(repo / "deploy"))
    json_report(capsys, str(repo / "other"))
    [folder] = (tmp_path / "xdg" / "gpustack" / "lint").iterdir()
    assert entries(folder, "output")
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all"], capture_output=True, text=True)
    assert sorted(status.stdout.split()[1::2]) == [".gpustack.yaml", "deploy/pod.yaml", "other/pod.yaml"]


def test_where_the_cache_goes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--cache-dir, then GPUSTACK_CACHE_DIR, then the config's cacheDir, then the user's cache
    folder ($XDG_CACHE_HOME, else ~/.cache), keyed by the linted folder outside a repository."""
    option, setting = tmp_path / "option", tmp_path / "setting"
    monkeypatch.setenv(cache_module.ENVIRONMENT, str(tmp_path / "environment"))
    assert cache_module.cache_folder(option, setting, tmp_path) == option
    assert cache_module.cache_folder(None, setting, tmp_path) == tmp_path / "environment"
    monkeypatch.delenv(cache_module.ENVIRONMENT)
    assert cache_module.cache_folder(None, setting, tmp_path) == setting
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    default = cache_module.cache_folder(None, None, tmp_path / "a")
    assert default.parent == tmp_path / "home" / ".cache" / "gpustack" / "lint"
    assert cache_module.cache_folder(None, None, tmp_path / "b") not in (default, None)


def test_the_config_chooses_the_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(cache_module.ENVIRONMENT, raising=False)
    (tmp_path / "deploy").mkdir()
    shutil.copy(FIXTURES / "GS002" / "fires-seed-privileged-hostpath-dev.yaml", tmp_path / "deploy" / "pod.yaml")
    (tmp_path / ".gpustack.yaml").write_text("cacheDir: .cache/lint\n")
    json_report(capsys, str(tmp_path / "deploy"))
    assert entries(tmp_path / ".cache" / "lint", "output")


def test_the_cache_is_bounded(tmp_path: Path) -> None:
    """Entries written run by run: past the limit, the least recently used go, down to three
    quarters of it; a read counts as a use."""
    root = tmp_path / "cache"

    def run(write: int, read: int | None = None) -> None:
        store = Cache(root)
        if read is not None:
            assert store.get("documents", f"{read:040x}") == b"x" * 1000
        store.put("documents", f"{write:040x}", b"x" * 1000)
        store.close(limit=10_500)  # ten entries of about 1,015 bytes fit, eleven do not

    for index in range(10):
        run(index)
    with sqlite3.connect(root / cache_module.DATABASE) as database:  # an hour and more later
        database.execute("UPDATE entries SET used = used - ?", (cache_module.USE_MARK_NS + 1,))
    run(10, read=0)  # 0 is now used after 1-9
    kept = sorted(int(key.split(":")[1], 16) for key in entries(root))
    assert kept == [0, 5, 6, 7, 8, 9, 10]


def test_one_run_writing_past_the_limit_is_bounded(tmp_path: Path) -> None:
    """The sizes are summed only where the store may outgrow its limit (the file before the
    run plus what it writes): a small store that one run fills past the limit is trimmed."""
    root = tmp_path / "cache"
    first = Cache(root)
    first.put("documents", f"{0:040x}", b"x" * 1000)
    first.close(limit=10_500)
    many = Cache(root)
    for index in range(1, 21):
        many.put("documents", f"{index:040x}", b"x" * 1000)
    many.close(limit=10_500)
    assert 0 < len(entries(root)) <= 7  # three quarters of the limit


def test_a_warm_run_leaves_the_store_as_it_is(generated: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A run that finds its output stored writes nothing: entries used within the hour keep
    their mark, so there is no write transaction to wait for."""
    folder = tmp_path / "cache"
    first = json_report(capsys, "--cache-dir", str(folder), str(generated))
    database = folder / cache_module.DATABASE
    before = (database.stat().st_mtime_ns, database.read_bytes())
    assert json_report(capsys, "--cache-dir", str(folder), str(generated)) == first
    assert (database.stat().st_mtime_ns, database.read_bytes()) == before


def test_concurrent_runs_share_the_cache(generated: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    plain = json_report(capsys, "--no-cache", str(generated))
    command = [sys.executable, "-m", "gpustack", "lint", "--format", "json", "--cache-dir", str(folder), str(generated)]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outputs = [run.communicate() for run in runs]
    assert [out for out, _ in outputs] == [plain] * 3 and all(err == "" for _, err in outputs)
    assert entries(folder, "output") and not (folder / f"{cache_module.DATABASE}-journal").exists()
    assert json_report(capsys, "--cache-dir", str(folder), str(generated)) == plain


def test_fix_never_applies_a_stored_result(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A warm cache, then the file edited so that every position moves: --fix must edit
    where the fields are now, exactly as without a cache."""
    text = (FIXTURES / "GS004" / "fires-no-context-info.yaml").read_text()
    folder = tmp_path / "cache"
    for name, cached in (("cached", True), ("plain", False)):
        work = tmp_path / name
        work.mkdir()
        manifest = work / "m.yaml"
        manifest.write_text(text)
        # GS023's hardening edits (an opt-in rule, selected) are the fixes here.
        options = ("--select", "GS023", *(("--cache-dir", str(folder)) if cached else ("--no-cache",)))
        gpustack(capsys, "lint", *options, str(manifest))
        manifest.write_text("# moved\n# down\n" + text)
        gpustack(capsys, "lint", *options, "--fix", str(manifest))
    assert (tmp_path / "cached" / "m.yaml").read_text() == (tmp_path / "plain" / "m.yaml").read_text() != "# moved\n# down\n" + text


def test_prefetched_entries_read_as_entries_read_one_by_one(tmp_path: Path) -> None:
    writing = Cache(tmp_path / "cache")
    for index in range(1200):  # more than one query's worth of keys
        writing.put_bytes("unit", f"{index:040x}", f"value {index}".encode())
    writing.close()
    keys = [f"{index:040x}" for index in range(0, 1400, 7)]  # some present, some absent
    one_by_one = Cache(tmp_path / "cache")
    expected = [one_by_one.get_bytes("unit", key) for key in keys]
    prefetched = Cache(tmp_path / "cache")
    prefetched.prefetch("unit", keys)
    assert len(prefetched.fetched) == len(keys)
    assert [prefetched.get_bytes("unit", key) for key in keys] == expected
    assert expected.count(None) == sum(1 for key in keys if int(key, 16) >= 1200)
    assert prefetched.fetched == {}  # each handed out once
