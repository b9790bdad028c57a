"""octet.ray on a local Ray instance of two CPUs: examples/ray_eval.py on 2 workers gives the figures
`octet eval` gives on the same test images (the first 2,560), and the benchmark map returns one row per item.

Run by the Python of the venv tools/setup.sh installs Ray into (third_party/ray/venv), from ctest
(tests/python/CMakeLists.txt: `python/test_ray.py`). Every process the Ray instance started must
be gone once it is shut down; its session files live in a temporary folder removed afterwards.
"""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

try:
    import ray
except ImportError as e:
    raise ImportError(f"{sys.executable} has no Ray: tools/setup.sh installs it into third_party/ray/venv "
                      "(third_party/ray/requirements.txt)") from e

import octet
import octet.ray

from conftest import SOURCE_DIR

EXAMPLE = SOURCE_DIR / "examples" / "ray_eval.py"


def stat_fields(pid):
    """The fields of /proc/<pid>/stat after the command name (state first); None once it is gone."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()


def process_tree(root):
    """{(pid, start time)} of every process below `root`, from /proc."""
    children = {}
    for entry in pathlib.Path("/proc").iterdir():
        fields = stat_fields(entry.name) if entry.name.isdigit() else None
        if fields:
            children.setdefault(int(fields[1]), []).append((int(entry.name), fields[19]))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child[0])
    return found


def running(procs):
    """{(pid, start time): CPU ticks used} of those of `procs` still running (same pid and start time,
    not a zombie)."""
    alive = {}
    for pid, start in procs:
        fields = stat_fields(pid)
        if fields and fields[19] == start and fields[0] != "Z":
            alive[(pid, start)] = int(fields[11]) + int(fields[12])  # utime + stime
    return alive


def command_line(pid):
    try:
        return pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:100]
    except OSError:
        return "?"


def wait_for_exit(procs, stuck_after=20.0, give_up_after=180.0):
    """Waits while any of `procs` runs and some of them still use CPU; returns those left, each with
    why: "stuck" (no CPU used for `stuck_after` s: a hang) or "busy" (still working after
    `give_up_after` s)."""
    started = time.monotonic()
    last_progress, last_ticks = started, {}
    while True:
        alive = running(procs)
        now = time.monotonic()
        if not alive:
            return {}
        if any(ticks != last_ticks.get(p) for p, ticks in alive.items()):
            last_progress, last_ticks = now, alive
        if now - last_progress > stuck_after:
            return {p: "stuck" for p in alive}
        if now - started > give_up_after:
            return {p: "busy" for p in alive}
        time.sleep(0.2)


@pytest.fixture(scope="module")
def local_ray():
    """The address of a local Ray instance of 2 CPUs, shut down afterwards with everything it started."""
    # Ray's socket paths must stay under 108 characters: a short folder in the temporary directory.
    tmp = tempfile.mkdtemp(prefix="octet-ray-")
    ray.data.DataContext.get_current().enable_progress_bars = False
    started = time.perf_counter()
    try:
        context = ray.init(num_cpus=2, include_dashboard=False, _temp_dir=tmp, configure_logging=False,
                           log_to_driver=False)
        print(f"ray.init: {time.perf_counter() - started:.1f} s")
        yield context.address_info["address"]
    finally:
        procs = process_tree(os.getpid())
        names = {pid: command_line(pid) for pid, _ in procs}
        ray.shutdown()
        # Ray's workers exit through Python's finalization, which takes seconds of CPU; in CI they share
        # two cores with a compiler (the pip wheel's build) and once took longer than 60 s. So a process
        # that still uses CPU is given time; one that uses none for 20 s hangs.
        left = wait_for_exit(procs)
        for pid, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(tmp, ignore_errors=True)
        assert not left, "processes Ray started did not exit after ray.shutdown(): " + "; ".join(
            f"{pid} {why} ({names[pid]})" for (pid, _), why in sorted(left.items()))


IMAGES = 2560  # 40 batches of 64 over the 2 workers


def test_ray_eval_on_two_workers_gives_octet_evals_figures(local_ray, tinynet):
    cli_path = os.environ.get("OCTET_CLI")
    if not cli_path or not os.path.exists(cli_path):
        pytest.skip("OCTET_CLI does not name the octet binary (ctest sets it)")
    # The CLI runs beside the Ray job: most of Ray's time is start-up, not computing. The first
    # IMAGES test images: the whole set on two CPUs shared with other tests took minutes.
    cli = subprocess.Popen([cli_path, "eval", tinynet, "--precision", "both", "--json", "--no-progress",
                            "--limit", str(IMAGES), "--latency-images", "1", "--warmup", "0"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, str(EXAMPLE), tinynet, "--precision", "both", "--workers", "2",
                               "--limit", str(IMAGES), "--address", local_ray, "--json"], capture_output=True, text=True, timeout=240)
        print(f"examples/ray_eval.py: {time.perf_counter() - started:.1f} s")
        cli_out, cli_err = cli.communicate(timeout=240)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
    assert done.returncode == 0, f"examples/ray_eval.py failed:\n{done.stderr[-4000:]}"
    assert cli.returncode == 0, f"octet eval failed:\n{cli_err}"
    got, want = json.loads(done.stdout), json.loads(cli_out)

    assert got["ray"]["workers"] == 2 and len(got["ray"]["batches_per_worker"]) == 2, got["ray"]
    assert sum(got["ray"]["batches_per_worker"]) == got["ray"]["batches"] == -(-IMAGES // 64)
    for key in ("model", "data", "classes", "precision", "batch", "int8_model", "int8_bytes"):
        assert got[key] == want[key], key
    del got["calibration"]["seconds"], want["calibration"]["seconds"]
    assert got["calibration"] == want["calibration"]
    for precision in ("fp32", "int8"):
        a, b = got[precision]["octet"]["accuracy"], want[precision]["octet"]["accuracy"]
        assert a["images"] == b["images"] == IMAGES
        assert (a["top1"], a["top5"], a["top1_correct"]) == (b["top1"], b["top5"], b["top1_correct"]), precision
        assert a["per_class"] == b["per_class"], precision
        assert a["confusion"] == b["confusion"], precision
        assert sum(c["total"] for c in a["per_class"]) == IMAGES
        row = got[precision]["latency"][0]
        assert (row["batch"], row["threads"]) == (64, 1) and row["octet"]["per_batch_ms"]["p50"] > 0
    # The text is octet eval's: the same accuracy lines.
    text, cli_text = octet.ray.EvalReport(got).text(), octet.ray.EvalReport(want).text()
    for line in ("top-1 ", "top-5 ", "model size"):
        assert [l for l in text.splitlines() if l.startswith(line)] == \
               [l for l in cli_text.splitlines() if l.startswith(line)], line


def test_benchmark_map_gathers_one_row_per_model_precision_and_level(local_ray, tinynet):
    info = octet.cpu(peaks=False)
    missing = [level for level in info["all_levels"] if level not in info["levels"]]
    levels = ["scalar", info["active"]] + missing[-1:]
    table = octet.ray.benchmark([tinynet], ["fp32", "int8"], levels, batch=16, images=32, latency_images=4,
                                warmup=1, workers=2, calib_count=64)
    print(table)
    assert [(r["precision"], r["isa"]) for r in table] == [(p, level) for p in ("fp32", "int8") for level in levels]
    for row in table:
        assert row["model"] == tinynet and row["batch"] == 16 and row["node"]
        if row["isa"] in missing:
            assert row["skipped"] == f"{row['isa']} is not on this CPU"
            continue
        assert not row.get("skipped")
        assert row["timing"]["batch1"]["per_batch_ms"]["samples"] == 4
        assert row["timing"]["batchN"]["per_batch_ms"]["samples"] == 2
        assert 0 < row["batch1_p50_ms"] and 0 < row["batchN_p50_ms"]
    if info["active"] != "scalar":  # the cap reached the workers: scalar kernels are tens of times slower
        by_level = {(r["precision"], r["isa"]): r["batch1_p50_ms"] for r in table if not r.get("skipped")}
        for precision in ("fp32", "int8"):
            assert by_level[precision, "scalar"] > 3 * by_level[precision, info["active"]], by_level
    assert str(table).splitlines()[0].split()[:4] == ["model", "precision", "isa", "node"]


def test_bad_options_fail_on_the_driver_before_any_worker_starts(local_ray, tinynet, tmp_path):
    with pytest.raises(ValueError, match="precision must be fp32, int8, dynamic, both or all, got 'fp16'"):
        octet.ray.evaluate(tinynet, precision="fp16")
    with pytest.raises(ValueError, match="isa: unknown level 'avx9'"):
        octet.ray.benchmark([tinynet], ["fp32"], ["avx9"])
    with pytest.raises(ValueError, match="precisions are fp32, int8 or dynamic, got 'both'"):
        octet.ray.benchmark([tinynet], ["both"])
    octet.quantize(tinynet, tmp_path / "int8.onnx", calib_count=16)
    with pytest.raises(ValueError, match="is already quantized .*there is no FP32 original to compare with"):
        octet.ray.evaluate(tmp_path / "int8.onnx", precision="both")
    with pytest.raises(octet.Error, match="has no model card with a default dataset"):
        octet.ray.evaluate(shutil.copy(tinynet, tmp_path / "no_card.onnx"))
