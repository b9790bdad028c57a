#!/usr/bin/env python3
"""Quantizes a model with ONNX Runtime's own tool (onnxruntime.quantization), so octet's parity
tests run the files ORT's users have, not octet's writer's:

    third_party/ort-quantization/venv/bin/python tools/ort/ort_quantize.py \
        --model M.onnx --calib calib.npy --out DIR

writes into DIR
    static_qdq.onnx         quantize_static, QuantFormat.QDQ, uint8 activations, int8 weights per channel, MinMax
    static_qoperator.onnx   quantize_static, QuantFormat.QOperator (QLinearConv, QLinearAdd, ...), same options
    dynamic.onnx            quantize_dynamic, int8 weights per tensor (its defaults)
With --preprocess the model first goes through ORT's own pre-processing (quant_pre_process:
ONNX shape inference and graph optimisation, as ORT's documentation asks before quantization;
its tool refuses some torch exports without it), saved as preprocessed.onnx, and that is what is
quantized.
calib.npy is float32 [N, C, H, W] model inputs, fed to the calibrator in batches of 16. The
venv (tools/setup.sh makes it from third_party/ort-quantization/requirements.txt) holds the
pinned onnxruntime, onnx and numpy. Errors print one line on stderr and exit 1; with
--keep-going a file the tool refuses to write (e.g. quantize_dynamic on NF-RegNet, whose conv
weights are computed in the graph: "Expected ... to be an initializer") is recorded instead, as
DIR/<file stem>.refused holding the tool's one-line error, and the other files are still written.
"""
import argparse
import pathlib
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--calib", required=True, help="float32 .npy of model inputs [N, C, H, W]")
    ap.add_argument("--out", required=True)
    ap.add_argument("--preprocess", action="store_true", help="run ORT's quant_pre_process first")
    ap.add_argument("--keep-going", action="store_true",
                    help="a file the tool refuses becomes <stem>.refused (its error); the others are still written")
    a = ap.parse_args()

    import numpy as np
    import onnx
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_dynamic, quantize_static)

    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.preprocess:
        from onnxruntime.quantization.shape_inference import quant_pre_process
        # Symbolic shape inference is skipped: it needs a sympy that Debian's (under the venv) is
        # not; ONNX's own shape inference and the graph optimisation still run.
        quant_pre_process(a.model, str(out / "preprocessed.onnx"), skip_symbolic_shape=True)
        a.model = str(out / "preprocessed.onnx")
    model = onnx.load(a.model)
    input_name = model.graph.input[0].name
    images = np.load(a.calib).astype(np.float32)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.batches = iter([images[i:i + 16] for i in range(0, len(images), 16)])

        def get_next(self):
            batch = next(self.batches, None)
            return None if batch is None else {input_name: batch}

    def static(fmt):
        return lambda path: quantize_static(a.model, path, Reader(), quant_format=fmt, per_channel=True,
                                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                                            calibrate_method=CalibrationMethod.MinMax)

    files = (("static_qdq", static(QuantFormat.QDQ)), ("static_qoperator", static(QuantFormat.QOperator)),
             ("dynamic", lambda path: quantize_dynamic(a.model, path, weight_type=QuantType.QInt8)))
    for stem, write in files:
        (out / f"{stem}.refused").unlink(missing_ok=True)
        try:
            write(str(out / f"{stem}.onnx"))
        except Exception as e:
            if not a.keep_going:
                raise
            (out / f"{stem}.onnx").unlink(missing_ok=True)
            (out / f"{stem}.refused").write_text(f"{type(e).__name__}: {e}".splitlines()[0] + "\n")
            print(f"ort_quantize.py: the tool refuses {stem}: {type(e).__name__}: {e}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # one line, as the other runners of tools/ort/
        print(f"ort_quantize.py: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
