"""octet.Session: outputs as the CLI's, onnxruntime's API, argument errors, threads."""
import gc
import os
import sys
import threading
import time

import numpy as np
import pytest

import octet
from conftest import images


def test_inputs_and_outputs_describe_the_model(tinynet):
    sess = octet.Session(tinynet)
    (x,), (y,) = sess.inputs, sess.outputs
    assert (x.name, x.shape, x.dtype, x.type) == ("input", [None, 1, 28, 28], "float32", "tensor(float)")
    assert (y.name, y.shape, y.dtype) == ("logits", [None, 10], "float32")
    assert [a.name for a in sess.get_inputs()] == ["input"]
    assert [a.name for a in sess.get_outputs()] == ["logits"]
    assert "NodeArg(name='input'" in repr(x)
    assert sess.isa == octet.cpu(peaks=False)["active"] and sess.threads == 1


def test_outputs_equal_the_cli_run(tinynet, cli, tmp_path):
    x = images(5)
    np.save(tmp_path / "input.npy", x)
    cli("run", tinynet, "--input", tmp_path / "input.npy", "--output-dir", tmp_path / "out")
    expected = np.load(tmp_path / "out" / "logits.npy")

    sess = octet.Session(tinynet)
    got = sess.run({"input": x})["logits"]
    assert got.dtype == np.float32 and got.shape == (5, 10)
    assert np.array_equal(got, expected)
    # A Fortran-order array is copied to C order first: the same numbers.
    assert np.array_equal(sess.run({"input": np.asfortranarray(x)})["logits"], expected)
    # A strided view (every other image) is copied too.
    doubled = np.repeat(x, 2, axis=0)
    assert np.array_equal(sess.run({"input": doubled[::2]})["logits"], expected)


def test_onnxruntime_style_calls_equal_the_dict_call(tinynet):
    x = images(3, seed=1)
    sess = octet.Session(tinynet)
    by_name = sess.run({"input": x})
    assert list(by_name) == ["logits"]
    assert np.array_equal(sess.run(None, {"input": x})[0], by_name["logits"])
    assert np.array_equal(sess.run(["logits"], {"input": x})[0], by_name["logits"])
    ort_like = octet.InferenceSession(tinynet, providers=["CPUExecutionProvider"])
    assert np.array_equal(ort_like.run(None, {"input": x})[0], by_name["logits"])
    assert ort_like.get_inputs()[0].name == "input"


def test_outputs_own_their_memory(tinynet):
    sess = octet.Session(tinynet)
    y = sess.run({"input": images(2)})["logits"]
    expected = y.copy()
    del sess
    gc.collect()
    assert y.flags.writeable and y.flags.c_contiguous
    assert np.array_equal(y, expected)


@pytest.mark.parametrize("value, message", [
    (images(1).astype(np.float64), "expects float32 [N,1,28,28], got float64 [1,1,28,28]"),
    (images(1).astype(np.float16), "got float16 [1,1,28,28]"),
    (images(1).tolist(), "got list"),
    (None, "got NoneType"),
])
def test_an_input_of_the_wrong_type_is_a_type_error(tinynet, value, message):
    sess = octet.Session(tinynet)
    with pytest.raises(TypeError, match=message.replace("[", r"\[").replace("]", r"\]")) as e:
        sess.run({"input": value})
    assert "tinynet.onnx: input 'input'" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("shape", [(1, 3, 28, 28), (1, 1, 28), (1, 1, 28, 27), (28, 28)])
def test_an_input_of_the_wrong_shape_is_a_value_error(tinynet, shape):
    sess = octet.Session(tinynet)
    with pytest.raises(ValueError, match=r"input 'input' expects float32 \[N,1,28,28\], got float32"):
        sess.run({"input": np.zeros(shape, np.float32)})


def test_wrong_names_and_feeds_are_argument_errors(tinynet):
    sess = octet.Session(tinynet)
    x = images(1)
    with pytest.raises(ValueError, match=r"no input 'image' \(its inputs: input\)"):
        sess.run({"input": x, "image": x})
    with pytest.raises(ValueError, match="no array given for input 'input'"):
        sess.run({})
    with pytest.raises(ValueError, match=r"no output 'probs' \(its outputs: logits\)"):
        sess.run(["probs"], {"input": x})
    with pytest.raises(TypeError, match="feeds must be a dict"):
        sess.run([x])
    with pytest.raises(TypeError, match="feeds must be a dict"):
        sess.run(None)


def test_octet_errors_are_octet_error(tinynet, tmp_path):
    assert issubclass(octet.Error, RuntimeError)
    with pytest.raises(octet.Error, match="missing.onnx"):
        octet.Session(tmp_path / "missing.onnx")
    (tmp_path / "bad.onnx").write_bytes(b"not a model")
    with pytest.raises(octet.Error, match="bad.onnx"):
        octet.Session(tmp_path / "bad.onnx")
    with pytest.raises(ValueError, match="unknown level 'avx9'"):
        octet.Session(tinynet, isa="avx9")
    with pytest.raises(ValueError, match="threads must be at least 1"):
        octet.Session(tinynet, threads=0)
    info = octet.cpu(peaks=False)
    for level in set(info["all_levels"]) - set(info["levels"]):
        with pytest.raises(ValueError, match=f"this CPU cannot run {level} kernels"):
            octet.Session(tinynet, isa=level)


def test_threads_beyond_the_cores_are_capped_with_a_warning(tinynet):
    cores = os.cpu_count() or 1
    with pytest.warns(RuntimeWarning, match=f"threads={cores * 128} is more than this machine's {cores} core"):
        sess = octet.Session(tinynet, threads=cores * 128)
    assert sess.threads == cores
    start = time.perf_counter()
    sess.run({"input": images(1)})
    assert time.perf_counter() - start < 5, "a capped session runs at the speed of its cores"


def test_an_input_too_large_to_copy_is_a_memory_error(tinynet):
    # A broadcast view has no memory of its own: its C-order copy (78 GB) cannot be made.
    huge = np.broadcast_to(np.zeros((1, 1, 1, 1), np.float32), (10**8, 1, 28, 28))
    with pytest.raises(MemoryError, match=r"cannot make a C-order copy of the float32 \[100000000,1,28,28\] input"):
        octet.Session(tinynet).run({"input": huge})


def test_a_lower_isa_runs_the_same_model(tinynet):
    x = images(2, seed=3)
    scalar = octet.Session(tinynet, isa="scalar")
    assert scalar.isa == "scalar"
    np.testing.assert_allclose(scalar.run({"input": x})["logits"], octet.Session(tinynet).run({"input": x})["logits"],
                               rtol=1e-4, atol=1e-4)


def test_one_session_serves_four_threads_at_once(tinynet):
    sess = octet.Session(tinynet)
    inputs = [images(3, seed=10 + i) for i in range(4)]
    expected = [sess.run({"input": x})["logits"] for x in inputs]
    results, errors = [[] for _ in inputs], []
    start = threading.Barrier(len(inputs))

    def work(i):
        try:
            start.wait()
            for _ in range(10):
                results[i].append(sess.run({"input": inputs[i]})["logits"])
        except Exception as e:  # reported below: an exception in a thread would pass unseen
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, runs in enumerate(results):
        assert len(runs) == 10 and all(np.array_equal(r, expected[i]) for r in runs)


def test_the_gil_is_released_while_octet_runs(tinynet):
    sess = octet.Session(tinynet)
    x = images(192, seed=4)  # a run of 50 ms or more
    sess.run({"input": x})  # plans built
    longest, stop = [0.0], threading.Event()

    def spin():  # pure Python: it can only take a step while no other thread holds the GIL
        last = time.perf_counter()
        while not stop.is_set():
            now = time.perf_counter()
            longest[0] = max(longest[0], now - last)
            last = now

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        time.sleep(0.02)
        t0 = time.perf_counter()
        sess.run({"input": x})
        seconds = time.perf_counter() - t0
        time.sleep(0.02)
    finally:
        stop.set()
        spinner.join()
        sys.setswitchinterval(switch)
    # Had run() kept the GIL, the spinner would have waited out the whole run in one step.
    assert longest[0] < seconds / 2, f"the spinner waited {longest[0] * 1e3:.1f} ms during a {seconds * 1e3:.1f} ms run"


def test_profile_times_every_step(tinynet):
    sess = octet.Session(tinynet)
    steps = sess.profile({"input": images(1)}, repeat=5)
    assert steps and all(s["microseconds"] > 0 for s in steps)
    assert {"node", "op", "kernel", "microseconds", "macs", "parts"} <= set(steps[0])
    convs = [s for s in steps if "Conv" in s["op"]]
    assert convs and all(s["kernel"] and s["macs"] > 0 for s in convs)
    with pytest.raises(ValueError, match="repeat must be at least 1"):
        sess.profile({"input": images(1)}, repeat=0)


def test_warm_up_runs_cover_the_plans_thread_tuning(tinynet):
    # A timing loop (benchmark(), profile()) makes this many untimed runs first: on threads the
    # plan times each step split and alone on its first runs, which are not the settled speed.
    assert octet.Session(tinynet).warm_up_runs == 1
    if (os.cpu_count() or 1) > 1:
        assert octet.Session(tinynet, threads=2).warm_up_runs == 7
