#!/usr/bin/env python3
"""Writes the two one-node Gemm models of bench/RESULTS.md ("Gemm with transA or alpha != 1"):
gemm_transa.onnx (transA = 1, A [256, 256], B [256, 256]) and gemm_alpha.onnx (alpha = 0.5,
A [64, 512], B [512, 256]), each with a constant B and bias row C of seeded random normals.

    /usr/bin/python3 bench/make_gemm_models.py OUT_DIR
    build/bench/model_bench --rounds 5 --iters 20 --threads 1 --batch 256 OUT_DIR/gemm_transa.onnx
    build/bench/model_bench --rounds 5 --iters 20 --threads 1 --batch 64 OUT_DIR/gemm_alpha.onnx
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def write(path, m, k, n, trans_a, alpha):
    rng = np.random.default_rng(0)
    b = numpy_helper.from_array(rng.normal(0, 0.05, (k, n)).astype(np.float32), "B")
    c = numpy_helper.from_array(rng.normal(0, 0.5, (n,)).astype(np.float32), "C")
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [k, m] if trans_a else [m, k])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])
    node = helper.make_node("Gemm", ["a", "B", "C"], ["y"], transA=trans_a, alpha=alpha)
    model = helper.make_model(helper.make_graph([node], "gemm", [a], [y], [b, c]),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_gemm_models.py OUT_DIR")
    os.makedirs(sys.argv[1], exist_ok=True)
    write(os.path.join(sys.argv[1], "gemm_transa.onnx"), 256, 256, 256, 1, 1.0)
    write(os.path.join(sys.argv[1], "gemm_alpha.onnx"), 64, 512, 256, 0, 0.5)
