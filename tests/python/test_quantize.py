"""octet.quantize writes the file `octet quantize` writes, given the same options."""
import json

import numpy as np
import pytest

import octet
from conftest import images


@pytest.fixture(scope="module")
def calib(tmp_path_factory):
    """A small calibration set (npy:FILE takes model inputs as they are): keeps the test fast."""
    path = tmp_path_factory.mktemp("calib") / "calib.npy"
    np.save(path, images(48, seed=7))
    return f"npy:{path}"


def quantize_both(cli, tinynet, tmp_path, cli_options, **python_options):
    cli_out, py_out = tmp_path / "cli" / "int8.onnx", tmp_path / "py" / "int8.onnx"
    cli_out.parent.mkdir()
    py_out.parent.mkdir()
    cli("quantize", tinynet, "-o", cli_out, "--no-progress", *cli_options)
    report = octet.quantize(tinynet, py_out, **python_options)
    return cli_out, py_out, report


def test_static_quantization_writes_the_cli_file(tinynet, cli, calib, tmp_path):
    cli_out, py_out, report = quantize_both(cli, tinynet, tmp_path, ["--calib", calib, "--calib-count", "32"],
                                            calib=calib, calib_count=32)
    assert py_out.read_bytes() == cli_out.read_bytes()
    # The FP32 model's card is copied beside the INT8 model as the CLI copies it.
    assert json.loads((py_out.with_suffix(".json")).read_text()) == json.loads(cli_out.with_suffix(".json").read_text())

    assert report["output"] == str(py_out) and report["calibration"]["images"] == 32
    assert report["calibration"]["method"] == "minmax" and report["octet_int8_ops"]

    # Its INT8 run gives what the CLI's run of the CLI's file gives, bit for bit.
    x = images(4, seed=8)
    np.save(tmp_path / "input.npy", x)
    cli("run", cli_out, "--input", tmp_path / "input.npy", "--output-dir", tmp_path / "out")
    got = octet.Session(py_out).run({"input": x})["logits"]
    assert np.array_equal(got, np.load(tmp_path / "out" / "logits.npy"))


def test_options_map_to_the_cli_flags(tinynet, cli, calib, tmp_path):
    cli_out, py_out, report = quantize_both(
        cli, tinynet, tmp_path,
        ["--calib", calib, "--calib-count", "16", "--per-tensor", "--act", "int8", "--method", "percentile",
         "--percentile", "99.9"],
        calib=calib, calib_count=16, per_channel=False, activations="int8", method="percentile", percentile=99.9)
    assert py_out.read_bytes() == cli_out.read_bytes()
    assert report["calibration"]["weights"] == "int8 symmetric per tensor"


def test_dynamic_quantization_writes_the_cli_file(tinynet, cli, tmp_path):
    cli_out, py_out, report = quantize_both(cli, tinynet, tmp_path, ["--mode", "dynamic", "--per-channel"],
                                            mode="dynamic", per_channel=True)
    assert py_out.read_bytes() == cli_out.read_bytes()
    assert report["calibration"]["mode"] == "dynamic"


def test_bad_options_fail_before_anything_is_written(tinynet, calib, tmp_path):
    out = tmp_path / "int8.onnx"
    with pytest.raises(ValueError, match="unknown calibration method 'kl'"):
        octet.quantize(tinynet, out, calib=calib, method="kl")
    with pytest.raises(ValueError, match="must be uint8 or int8"):
        octet.quantize(tinynet, out, calib=calib, activations="int4")
    with pytest.raises(octet.Error, match="does not exist"):
        octet.quantize(tinynet, tmp_path / "no" / "such" / "folder.onnx", calib=calib)
    with pytest.raises(octet.Error, match="refusing to calibrate on a test split"):
        octet.quantize(tinynet, out, calib="fashion-mnist:test")
    assert list(tmp_path.iterdir()) == []
