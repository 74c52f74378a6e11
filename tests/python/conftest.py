"""Shared fixtures of the Python tests: the vectors and their manifest, the
sheaf command-line tool. Environment (set by ctest, tests/python/CMakeLists.txt):
SHEAF_VECTORS_DIR, SHEAF_CLI (build/tools/sheaf), SHEAF_LIBRARY, PYTHONPATH."""
import json
import os

import pytest

VDIR = os.environ.get("SHEAF_VECTORS_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                                          "shared", "vectors", "sionlib-1.7.6")


@pytest.fixture(scope="session")
def vdir():
    if not os.path.exists(os.path.join(VDIR, "MANIFEST.json")):
        pytest.fail(f"no MANIFEST.json in {VDIR} (set SHEAF_VECTORS_DIR)")
    return VDIR


@pytest.fixture(scope="session")
def manifest(vdir):
    with open(os.path.join(vdir, "MANIFEST.json")) as f:
        return json.load(f)


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("SHEAF_CLI")
    if not path or not os.path.exists(path):
        pytest.skip("SHEAF_CLI (the sheaf tool) not set")
    return path


def pattern(task, n):
    """The vectors' data: byte i of task t = (t*131 + i*7 + (i>>8)) mod 256."""
    import numpy as np
    i = np.arange(n, dtype=np.int64)
    return ((task * 131 + i * 7 + (i >> 8)) % 256).astype(np.uint8).tobytes()
