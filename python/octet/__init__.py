"""octet from Python: run ONNX models in FP32 and INT8 on octet's own kernels, quantize them,
and see why INT8 is faster or slower than FP32 on this CPU.

    import numpy as np, octet
    sess = octet.Session("model.onnx")             # or octet.InferenceSession, as in onnxruntime
    logits = sess.run({"input": images})["logits"]  # ORT's form works too: sess.run(None, feeds)[0]

Inputs that are C-contiguous arrays of the input's dtype are read in place; outputs are NumPy
arrays that own the engine's result (no copy). The GIL is released while octet computes, so one
session can serve several Python threads at once.

octet.ray (imported on its own, it needs Ray) spreads `octet eval` and benchmarks over a Ray cluster.
"""
import os as _os

from . import _octet
from ._octet import Error, NodeArg, __version__, cpu, explain, ort_run, quantize

__all__ = ["Session", "InferenceSession", "NodeArg", "Error", "quantize", "explain", "cpu", "ort_run",
           "ort_available", "__version__"]


class Session(_octet.Session):
    """A model loaded and optimized once, run on NumPy arrays.

    path: the ONNX file (FP32, or INT8 as written by octet.quantize or onnxruntime).
    isa: the highest ISA level the kernels may use ("scalar", "avx2", "avx512vnni", ...; see
        octet.cpu()["levels"]); default: the best this CPU has, or OCTET_ISA.
    threads: threads the kernels split their work over (default 1); more than the machine's
        cores are capped to the cores, with a RuntimeWarning.
    """

    def __init__(self, path, isa=None, threads=1):
        super().__init__(_os.fspath(path), isa, threads)
        self._output_names = [o.name for o in self.outputs]

    def run(self, output_names, input_feed=None, run_options=None):
        """run(feeds) -> {output name: array}, every output.

        run(output_names, feeds) -> [array, ...]: onnxruntime's form, the outputs named (every
        output when None) in that order. run_options is accepted for onnxruntime's signature and
        ignored.
        """
        if input_feed is None:
            return dict(zip(self._output_names, self._run(output_names)))
        return self._run(input_feed, output_names)

    def get_inputs(self):
        return self.inputs

    def get_outputs(self):
        return self.outputs

    def __repr__(self):
        return f"octet.Session({self.path!r}, isa={self.isa!r}, threads={self.threads})"


class InferenceSession(Session):
    """octet.Session under onnxruntime's name and signature, so that a notebook switches engines
    by changing one line. providers and provider_options are accepted and ignored (octet runs on
    the CPU); sess_options.intra_op_num_threads, when set, gives the threads.
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, *, isa=None,
                 threads=None):
        if isinstance(path_or_bytes, (bytes, bytearray)):
            raise TypeError("octet loads models from files: give the model's path, not its bytes")
        if threads is None:
            threads = getattr(sess_options, "intra_op_num_threads", 0) or 1
        super().__init__(path_or_bytes, isa=isa, threads=threads)


def ort_available():
    """Whether octet.ort_run can use ONNX Runtime here (through Node and onnxruntime-node)."""
    return not _octet.ort_unavailable_reason()
