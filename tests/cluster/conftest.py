"""Cluster tier fixtures (the clusters themselves are started per module: see support.start)."""

from __future__ import annotations

import pytest

from tests.cluster.deploy import Unavailable, find_helm
from tests.cluster.support import unavailable


@pytest.fixture(scope="session")
def helm() -> str:
    try:
        return find_helm()
    except Unavailable as missing:
        unavailable(str(missing))
        raise
