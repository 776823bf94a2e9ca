"""containerd's TOML config files in a folder: read by name as one document each, left out when
they name no containerd plugin, and read as given when named on the command line."""

from __future__ import annotations

from pathlib import Path

from gpustack.lint.facts.containerdconfig import FILE_KEY, implied_version, runtime_settings
from gpustack.lint.input.discover import read_inputs
from gpustack.lint.input.load import load_inputs

V2_TABLE = '[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "nvidia"\n'


def test_folder_reads_containerd_configs_by_name_only(tmp_path: Path) -> None:
    (tmp_path / "k3s").mkdir()
    (tmp_path / "k3s" / "config-v3.toml.tmpl").write_text('{{ template "base" . }}\n' + V2_TABLE)
    (tmp_path / "containerd" / "conf.d").mkdir(parents=True)
    (tmp_path / "containerd" / "conf.d" / "nvidia.toml").write_text("version = 2\n" + V2_TABLE)
    (tmp_path / "config.toml").write_text('baseURL = "https://example.org/"\n')  # a site's, not containerd's
    (tmp_path / "pyproject.toml").write_text('[plugins."io.containerd.x"]\n')  # not a containerd name
    loaded = load_inputs(read_inputs([str(tmp_path)]))
    assert not loaded.errors
    read = sorted(Path(r.file).relative_to(tmp_path).as_posix() for r in loaded.resources)
    assert read == ["containerd/conf.d/nvidia.toml", "k3s/config-v3.toml.tmpl"]
    assert all(r.kind is None and FILE_KEY in r.data for r in loaded.resources)


def test_a_named_file_that_is_no_containerd_config_is_read_as_given(tmp_path: Path) -> None:
    site = tmp_path / "config.toml"
    site.write_text('baseURL = "https://example.org/"\n')
    [(name, data)] = read_inputs([str(site)])
    assert (name, data) == (str(site), site.read_bytes())


def test_template_actions_and_bad_toml() -> None:
    [found] = runtime_settings('{{ template "base" . }}\nversion = 3\n' + V2_TABLE + "{{ end }}\n")
    assert (found.runtime, found.version, found.table_entry) == ("nvidia", 3, False)
    assert runtime_settings("version = 3 [plugins") == []
    assert implied_version("a/k3s/config-v3.toml.tmpl") == 3
    assert implied_version("config.toml.tmpl") is None
