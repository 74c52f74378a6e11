"""Shared fixtures of the Python tests: the vectors and their manifest, the
sheaf command-line tool. Environment (set by ctest, tests/python/CMakeLists.txt):
SHEAF_VECTORS_DIR, SHEAF_CLI (build/tools/sheaf), SHEAF_LIBRARY, PYTHONPATH.

No silent skips: a session in which a test skipped (SHEAF_CLI unset, say) and
none failed exits 77 (ctest's SKIP_RETURN_CODE) after naming every skipped
test and its reason; pytest alone would exit 0 and ctest would call it passed."""
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


_skipped = []


def pytest_runtest_logreport(report):
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _skipped.append((report.nodeid, reason))


def pytest_sessionfinish(session, exitstatus):
    if _skipped and exitstatus == 0:
        for nodeid, reason in _skipped:
            print(f"\nSKIP: {nodeid}: {reason}")
        print(f"SKIP: {len(_skipped)} test(s) skipped: exit 77 (a skip for ctest, not a pass)")
        session.exitstatus = 77


def pattern(task, n):
    """The vectors' data: byte i of task t = (t*131 + i*7 + (i>>8)) mod 256."""
    import numpy as np
    i = np.arange(n, dtype=np.int64)
    return ((task * 131 + i * 7 + (i >> 8)) % 256).astype(np.uint8).tobytes()
