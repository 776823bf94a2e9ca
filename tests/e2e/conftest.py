"""e2e tier fixtures: the helm binary and the examples rendered once per session."""

from __future__ import annotations

from pathlib import Path

import pytest
from real_charts import Helm, find_helm
from render_helpers import EXAMPLES, Result, render_file


@pytest.fixture(scope="session")
def helm_binary() -> str:
    return find_helm()


@pytest.fixture(scope="session")
def rendered_examples() -> dict[str, Result]:
    return {}


@pytest.fixture
def example(request: pytest.FixtureRequest, rendered_examples: dict[str, Result], helm_binary: str) -> tuple[Result, Helm]:
    """The parametrised example (a path under examples/), rendered, and helm for its version."""
    path: Path = request.param
    if path.stem not in rendered_examples:
        rendered_examples[path.stem] = render_file(path)
    result = rendered_examples[path.stem]
    return result, Helm(helm_binary, result[0].ctx.stack.spec.cluster.minor)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "example" in metafunc.fixturenames:
        metafunc.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES], indirect=True)
