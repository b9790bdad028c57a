"""octet.explain, octet.cpu, octet.ort_run, and the package as cmake --install lays it out."""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import octet
from conftest import images


def test_cpu_lists_the_levels_and_their_peaks():
    info = octet.cpu()
    assert info["levels"][0] == "scalar" and set(info["levels"]) <= set(info["all_levels"])
    assert info["detected"] in info["levels"] and info["active"] in info["levels"]
    assert info["cores"] >= 1 and info["cache_per_core_bytes"] > 0
    if info["peaks"] is not None:  # the build has bench/'s peak loops
        assert set(info["peaks"]) == set(info["levels"])
        assert all(p["fp32_gflops"] > 0 and p["int8_gops"] > 0 for p in info["peaks"].values())
    assert octet.cpu(peaks=False)["peaks"] is None


def test_explain_returns_the_report_it_writes(tinynet, tmp_path):
    np.save(tmp_path / "calib.npy", images(16, seed=5))
    level = octet.cpu(peaks=False)["active"]
    report = octet.explain(tinynet, html=tmp_path / "report.html", json=tmp_path / "report.json", data="none",
                           isa_levels=[level], batch=1, calib=f"npy:{tmp_path / 'calib.npy'}", calib_count=16)
    assert report["schema"] == "octet-explain/1" and report["verdict"]
    assert json.loads((tmp_path / "report.json").read_text()) == report
    assert (tmp_path / "report.html").read_text().lstrip().lower().startswith("<!doctype html")


def test_explain_refuses_bad_options(tinynet, tmp_path):
    with pytest.raises(ValueError, match="unknown level 'avx9'"):
        octet.explain(tinynet, json=tmp_path / "r.json", isa_levels="avx9")
    with pytest.raises(ValueError, match="mode must be static, dynamic or both"):
        octet.explain(tinynet, json=tmp_path / "r.json", mode="fast")
    assert list(tmp_path.iterdir()) == []


def test_ort_run_agrees_with_octet(tinynet):
    if not octet.ort_available():
        pytest.skip("ONNX Runtime is not available here: " + octet._octet.ort_unavailable_reason())
    x = images(2, seed=6)
    expected = octet.Session(tinynet).run({"input": x})["logits"]
    got = octet.ort_run(tinynet, {"input": x})
    assert list(got) == ["logits"]
    np.testing.assert_allclose(got["logits"], expected, rtol=1e-4, atol=1e-4)


def test_the_installed_package_imports(tmp_path):
    build, cmake = os.environ.get("OCTET_BUILD_DIR"), os.environ.get("OCTET_CMAKE")
    if not build or not cmake:
        pytest.skip("OCTET_BUILD_DIR and OCTET_CMAKE name the build tree and cmake (ctest sets them)")
    done = subprocess.run([cmake, "--install", build, "--component", "python", "--prefix", tmp_path / "prefix"],
                          capture_output=True, text=True, env={**os.environ, "DESTDIR": str(tmp_path / "root")})
    assert done.returncode == 0, done.stderr
    # Where it went: under the prefix (the site directory is prefix-relative), else under DESTDIR.
    (package,) = [p.parent for p in tmp_path.rglob("octet/__init__.py")]
    env = {**os.environ, "PYTHONPATH": str(package.parent)}
    check = "import octet, sys; print(octet.__file__); print(octet.Session is not None)"
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert pathlib.Path(done.stdout.split()[0]).parent == package


def test_the_readme_example_gives_int8_identical_to_onnx_runtime(tinynet, tmp_path):
    """README.md's Python example, as printed there: TinyNet quantized as `octet quantize` does
    (1000 training images), on the first 1000 Fashion-MNIST test images, top-1 93.9% (FP32) and
    93.9% (INT8), INT8 top-1 agreement 1.0 with ONNX Runtime at a largest difference of 0."""
    import gzip
    root = pathlib.Path("/usr/share/datasets/fashion-mnist")
    if not (root / "t10k-images-idx3-ubyte.gz").exists():
        pytest.skip("Fashion-MNIST is absent (apt-get install dataset-fashion-mnist)")
    if not octet.ort_available():
        pytest.skip("ONNX Runtime is not available here: " + octet._octet.ort_unavailable_reason())
    with gzip.open(root / "t10k-images-idx3-ubyte.gz") as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)[:1000]
    with gzip.open(root / "t10k-labels-idx1-ubyte.gz") as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)[:1000]
    x = ((x / 255.0 - 0.286) / 0.353).astype(np.float32)
    int8 = tmp_path / "tinynet_int8.onnx"
    octet.quantize(tinynet, int8)
    fp32_logits = octet.InferenceSession(tinynet).run(None, {"input": x})[0]
    logits = octet.InferenceSession(str(int8)).run(None, {"input": x})[0]
    assert round(float(np.mean(fp32_logits.argmax(1) == y)), 3) == 0.939
    assert round(float(np.mean(logits.argmax(1) == y)), 3) == 0.939
    ort = octet.ort_run(str(int8), {"input": x})["logits"]
    assert np.mean(ort.argmax(1) == logits.argmax(1)) == 1.0
    assert np.abs(ort - logits).max() == 0
