"""Shared fixtures of the Python module's tests (run from ctest: tests/python/CMakeLists.txt)."""
import os
import pathlib
import subprocess

import numpy as np
import pytest

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def tinynet():
    return str(SOURCE_DIR / "models" / "tinynet.onnx")


@pytest.fixture(scope="session")
def cli():
    """Runs the octet command line of the same build (OCTET_CLI, set by ctest)."""
    path = os.environ.get("OCTET_CLI")
    if not path or not os.path.exists(path):
        pytest.skip("OCTET_CLI does not name the octet binary (ctest sets it)")

    def run(*args):
        done = subprocess.run([path, *map(str, args)], capture_output=True, text=True)
        assert done.returncode == 0, f"octet {' '.join(map(str, args))}: {done.stderr}"
        return done.stdout

    return run


def images(count, seed=0):
    """TinyNet inputs: `count` images of normalized random pixels, float32 [count, 1, 28, 28]."""
    rng = np.random.default_rng(seed)
    return ((rng.random((count, 1, 28, 28)) - 0.286) / 0.353).astype(np.float32)
