"""octet on a Ray cluster: `octet eval` and benchmarks spread over many workers and machines.

    import ray, octet.ray
    ray.init(address="auto")                      # or ray.init(num_cpus=2) for a local instance
    report = octet.ray.evaluate("models/tinynet.onnx", precision="both", workers=8)
    print(report)                                 # the text `octet eval` prints for the same data
    table = octet.ray.benchmark(["a.onnx", "b.onnx"], precisions=["fp32", "int8"], isa_levels=["avx2", "avx512vnni"])
    print(table)

evaluate() reads the dataset on the driver with octet's own readers (the model card's
preprocessing), quantizes once there when INT8 is asked for, and hands blocks of images to a pool
of Ray actors (ray.data.Dataset.map_batches with a stateful class): each worker builds its
octet.Session for every precision once, from model bytes shipped to it (no shared filesystem
needed), and returns the scores. The driver computes accuracy with the code `octet eval` uses,
so top-1, top-5, per-class figures and the confusion matrix are those of `octet eval` on the
same images; latency is the workers' per-batch time, pooled.

benchmark() distributes (model x precision x ISA level) items to workers, each timing its item
the way `octet eval` times its latency rows, and gathers one table.

octet must be importable on every node (the same build), and needs Ray: pip install 'ray[data]'
(tools/setup.sh installs it into third_party/ray/venv). `import octet` alone never imports Ray.
"""
import json
import os
import socket
import tempfile
import time
import uuid

import numpy as np

try:
    import ray
    import ray.data
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("octet.ray needs Ray: pip install 'ray[data]' (tools/setup.sh installs it into "
                      "third_party/ray/venv)") from e

from . import Error, Session, _octet, cpu

__all__ = ["evaluate", "benchmark", "EvalReport", "BenchmarkTable"]

_PRECISIONS = ("fp32", "int8", "dynamic", "both", "all")


class EvalReport(dict):
    """`octet eval --json`'s report (a dict, JSON-serializable); str() is the text `octet eval` prints."""

    def text(self):
        return _octet._eval_report_text(self)

    def __str__(self):
        return self.text().rstrip("\n")  # print() adds the last newline back


class BenchmarkTable(list):
    """One dict per (model, precision, ISA level); str() is the table as text."""

    def __str__(self):
        head = ("model", "precision", "isa", "node", "P50 ms/img b1", "P50 ms/img bN", "images/s bN")
        rows = []
        for r in self:
            if r.get("skipped"):
                rows.append((r["model"], r["precision"], r["isa"], r["node"], "skipped: " + r["skipped"], "", ""))
                continue
            rows.append((r["model"], r["precision"], r["isa"], r["node"], f"{r['batch1_p50_ms']:.3f}",
                         f"{r['batchN_p50_ms']:.3f}", f"{1000.0 / r['batchN_mean_ms']:.0f}"))
        widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
        line = lambda cells: "  ".join(str(c).ljust(w) if i < 4 else str(c).rjust(w)
                                       for i, (c, w) in enumerate(zip(cells, widths)))
        batch = self[0]["batch"] if self else 0
        return "\n".join([line(head)] + [line(r) for r in rows] +
                         [f"(bN: batch {batch}; per-image milliseconds after warm-up, each item on one worker)"])


def _map_batches(ds, cls, workers, threads, batch_size, constructor_kwargs):
    """ds.map_batches over a pool of `workers` actors of `cls`, each reserving `threads` CPUs."""
    return ds.map_batches(cls, batch_size=batch_size, batch_format="numpy", fn_constructor_kwargs=constructor_kwargs,
                          num_cpus=threads, compute=ray.data.ActorPoolStrategy(size=workers))


def _shared(value):
    """`value` in the object store, wrapped so that a worker's constructor gets the reference (and fetches it
    once per node) rather than Ray inlining megabytes of models into every actor's creation."""
    return [ray.put(value)]


def _fetch(shared):
    return ray.get(shared[0])


def _sessions(models, isa, threads):
    """octet Sessions of model bytes, by name: each written to a temporary file that is removed once loaded."""
    sessions = {}
    with tempfile.TemporaryDirectory(prefix="octet-ray-") as tmp:
        for name, blob in models.items():
            path = os.path.join(tmp, f"{name}.onnx")
            with open(path, "wb") as f:
                f.write(blob)
            sessions[name] = Session(path, isa=isa, threads=threads)
    return sessions


class _EvalWorker:
    """A Ray Data worker of evaluate(): one Session per precision, built once; a batch in, its scores out."""

    def __init__(self, models, isa, threads, input_name, model_name):
        self.sessions = _sessions(_fetch(models), isa, threads)
        self.input_name = input_name
        self.model_name = model_name
        self.node = ray.get_runtime_context().get_node_id()
        self.worker = uuid.uuid4().int & 0x7FFFFFFF
        self.batches = 0

    def __call__(self, batch):
        x = np.ascontiguousarray(batch["input"], dtype=np.float32)
        n = len(x)
        out = {"index": batch["index"], "label": batch["label"]}
        for name, session in self.sessions.items():
            t0 = time.perf_counter()
            scores = session.run(None, {self.input_name: x})[0]
            out["ms_" + name] = np.full(n, (time.perf_counter() - t0) * 1e3)
            if scores.dtype != np.float32 or scores.ndim != 2:
                raise Error(f"{self.model_name}: output '{session.outputs[0].name}' is {scores.dtype} "
                            f"{list(scores.shape)}, not [batch, classes]: evaluate measures classifiers")
            out["scores_" + name] = scores
        out["batch_id"] = np.full(n, (self.worker << 31) | self.batches, dtype=np.int64)
        out["node"] = np.full(n, self.node)
        self.batches += 1
        return out


def _dataset(inputs, labels, block_images):
    """The evaluation set as a materialized Ray Dataset: index, label and input columns, in blocks."""
    import pyarrow as pa
    from ray.data.extensions import ArrowTensorArray

    tables = []
    for start in range(0, len(labels), block_images):
        end = min(len(labels), start + block_images)
        tables.append(pa.table({"index": np.arange(start, end, dtype=np.int64), "label": labels[start:end],
                                "input": ArrowTensorArray.from_numpy(inputs[start:end])}))
    return ray.data.from_arrow(tables)


def _quantize(model, mode, batch, calibration):
    """The model quantized once on the driver, as `octet eval` quantizes it in memory: (ONNX bytes, report)."""
    return _octet._quantize_in_memory(model, mode=mode, batch=batch, **calibration)


def _client_mode():
    """Whether this driver is a Ray Client (ray://): Ray Data cannot run there, the driver's part then runs
    as a task on the cluster."""
    try:
        from ray.util.client import ray as client
    except ImportError:
        return False
    return client.is_connected()


def _model_files(path):
    """(file name, model bytes, card bytes or None): what a task on the cluster needs to see the model as here."""
    card = os.path.splitext(path)[0] + ".json"
    with open(path, "rb") as f:
        blob = f.read()
    card_blob = None
    if os.path.exists(card):
        with open(card, "rb") as f:
            card_blob = f.read()
    return os.path.basename(path), blob, card_blob


def _write_model_files(files, folder):
    name, blob, card_blob = files
    path = os.path.join(folder, name)
    with open(path, "wb") as f:
        f.write(blob)
    if card_blob is not None:
        with open(os.path.splitext(path)[0] + ".json", "wb") as f:
            f.write(card_blob)
    return path


@ray.remote(num_cpus=0)
def _on_cluster(what, files, shown, args, kwargs):
    """evaluate() or benchmark() run inside the cluster for a Ray Client, on the client's model files (with
    their cards); the dataset is read on the cluster."""
    with tempfile.TemporaryDirectory(prefix="octet-ray-") as tmp:
        paths = []
        for i, f in enumerate(files):
            os.mkdir(os.path.join(tmp, str(i)))
            paths.append(_write_model_files(f, os.path.join(tmp, str(i))))
        if what == "evaluate":
            report = evaluate(paths[0], *args, **kwargs)
            report["model"] = shown[0]
            return dict(report)
        rows = benchmark(paths, *args, **kwargs)
        for row in rows:
            row["model"] = shown[paths.index(row["model"])]
        return list(rows)


def _precision_plan(precision, quantized, model, mode):
    """(want fp32, want int8, want dynamic) for `precision`, with octet eval's checks and messages."""
    p = precision or ("int8" if quantized else "fp32")
    if p not in _PRECISIONS:
        raise ValueError(f"precision must be fp32, int8, dynamic, both or all, got '{p}'")
    if quantized and p != "int8":
        raise ValueError(f"{model} is already quantized ({quantized}): there is no FP32 original to "
                         f"{'compare with' if p in ('both', 'all') else 'run'}; use precision='int8', or evaluate "
                         f"the FP32 model with precision='{'dynamic' if p == 'dynamic' else 'both'}'")
    if p == "all" and mode == "dynamic":
        raise ValueError("precision 'all' already has a dynamic column; mode='dynamic' would make the INT8 column "
                         "dynamic too")
    return p, p in ("fp32", "both", "all"), p in ("int8", "both", "all"), p in ("dynamic", "all")


def evaluate(model, data=None, *, precision=None, limit=None, batch=64, workers=2, threads=1, isa=None,
             block_images=None, calib=None, calib_count=1000, per_class=0, method="minmax", percentile=99.999,
             per_channel=None, activations="uint8", keep_float=None, mode="static", allow_test_calibration=False):
    """`octet eval MODEL` on a Ray cluster; returns its report (an EvalReport: print it for the text).

    model, data, precision, limit, batch and the calibration options (calib ... allow_test_calibration)
    are `octet eval`'s --data, --precision, --limit, --batch, --calib, ... (see `octet eval --help`):
    data defaults to the model card's dataset, precision to fp32 (int8 for an already quantized
    model). workers: Ray actors, each reserving `threads` CPUs and running octet on that many
    threads; isa caps the ISA level on every worker. block_images: images per block handed to a
    worker, rounded up to whole batches (default: about four blocks per worker).
    """
    if batch < 1 or workers < 1 or threads < 1:
        raise ValueError(f"batch, workers and threads must be at least 1, got {batch}, {workers}, {threads}")
    model = os.fspath(model)
    if _client_mode():
        options = dict(precision=precision, limit=limit, batch=batch, workers=workers, threads=threads, isa=isa,
                       block_images=block_images, calib=calib, calib_count=calib_count, per_class=per_class,
                       method=method, percentile=percentile, per_channel=per_channel, activations=activations,
                       keep_float=keep_float, mode=mode, allow_test_calibration=allow_test_calibration)
        return EvalReport(ray.get(_on_cluster.remote("evaluate", [_model_files(model)], [model], [data], options)))
    calibration = dict(calib=calib, calib_count=calib_count, per_class=per_class, method=method,
                       percentile=percentile, per_channel=per_channel, activations=activations,
                       keep_float=keep_float, allow_test_calibration=allow_test_calibration)
    info = _octet._eval_data(model, "" if data is None else str(data), -1 if limit is None else int(limit))
    p, want_fp32, want_int8, want_dynamic = _precision_plan(precision, info["quantized"], model, mode)

    report = EvalReport(model=info["model"], file_bytes=info["file_bytes"], parameters=info["parameters"],
                        data=info["data"], classes=info["classes"], precision=p, batch=batch)
    models = {}
    with open(model, "rb") as f:
        blob = f.read()
    if want_fp32:
        models["fp32"] = blob
    if want_int8 and info["quantized"]:
        models["int8"] = blob
        report["int8_model"] = {"source": "model", "bytes": info["file_bytes"]}
    elif want_int8:
        models["int8"], report["calibration"] = _quantize(model, mode, batch, calibration)
        report["int8_model"] = {"source": "quantized in memory", "bytes": len(models["int8"])}
    if want_dynamic:
        models["dynamic"], report["dynamic_calibration"] = _quantize(model, "dynamic", batch, calibration)
        report["dynamic_model"] = {"source": "quantized in memory", "bytes": len(models["dynamic"])}

    labels, inputs = info["labels"], info["inputs"]
    count = len(labels)
    # Whole batches per block, so that a worker's batches are all full but the very last.
    blocks_of = -(-count // (4 * workers * batch)) if block_images is None else -(-int(block_images) // batch)
    block_images = max(1, blocks_of) * batch
    started = time.perf_counter()
    ds = _dataset(inputs, labels, block_images)
    scored = _map_batches(ds, _EvalWorker, workers, threads, batch,
                          dict(models=_shared(models), isa=isa, threads=threads, input_name=info["input"],
                               model_name=model))
    parts = list(scored.iter_batches(batch_size=None, batch_format="numpy"))
    seconds = time.perf_counter() - started

    def column(name):
        return np.concatenate([b[name] for b in parts])

    index = column("index")
    order = np.argsort(index, kind="stable")
    if not np.array_equal(index[order], np.arange(count)):
        raise Error(f"the workers returned {len(index)} results for {count} images, not one per image")
    batch_ids, first, rows_per_batch = np.unique(column("batch_id"), return_index=True, return_counts=True)
    nodes = len(set(column("node").tolist()))
    note = (f"octet ran on {workers} Ray worker{'s' if workers > 1 else ''} of {threads} thread"
            f"{'s' if threads > 1 else ''} each, on {nodes} node{'s' if nodes > 1 else ''}; latency is "
            f"the workers' batch-{batch} runs, pooled (no batch-1 row: see octet.ray.benchmark)")

    sections = {}
    for name in models:
        scores = column("scores_" + name)[order]
        if info["classes_from_card"] and len(info["classes"]) != scores.shape[1]:
            raise Error(f"the model card names {len(info['classes'])} classes but the model's output has "
                        f"{scores.shape[1]} scores per image: the card does not belong to this model")
        batch_ms = column("ms_" + name)[first]
        full = rows_per_batch == batch
        run_ms = np.concatenate([batch_ms[full], batch_ms[~full]]).tolist()
        timing = _octet._eval_timing("octet", batch, threads, run_ms, count)
        section = {"octet": {"accuracy": _octet._eval_accuracy(scores, labels, info["classes"])},
                   "latency": [{"batch": batch, "threads": threads, "octet": timing}], "note": note}
        if name != "fp32":
            section["bytes"] = report[f"{'int8' if name == 'int8' else 'dynamic'}_model"]["bytes"]
        sections[name] = section

    if p in ("both", "all"):
        report["fp32"] = sections["fp32"]
        report["int8"] = sections["int8"]
        report["int8_bytes"] = sections["int8"]["bytes"]
        report["size_ratio"] = report["file_bytes"] / report["int8_bytes"] if report["int8_bytes"] else 0.0
        if "dynamic" in sections:
            report["dynamic"] = sections["dynamic"]
    else:
        report.update(next(iter(sections.values())))
    per_worker = np.unique(batch_ids >> 31, return_counts=True)[1]
    report["ray"] = {"workers": workers, "threads": threads, "nodes": nodes, "blocks": len(parts),
                     "batches": len(batch_ids), "batches_per_worker": per_worker.tolist(), "seconds": seconds}
    return report


class _BenchWorker:
    """A Ray Data worker of benchmark(): times each (model, precision, ISA) item it is given."""

    def __init__(self, models, inputs, input_names, batch, threads, images, latency_images, warmup):
        self.models, self.inputs, self.input_names = _fetch(models), _fetch(inputs), input_names
        self.batch, self.threads, self.images = batch, threads, images
        self.latency_images, self.warmup = latency_images, warmup
        self.levels = cpu(peaks=False)["levels"]
        self.node = socket.gethostname()

    def _time(self, session, name, x, batch, images):
        runs = [x[i:i + batch] for i in range(0, images, batch)]
        for _ in range(max(self.warmup, session.warm_up_runs)):  # on threads, past the plan's tuning runs
            session.run(None, {name: runs[0]})
        ms = []
        for r in runs:
            t0 = time.perf_counter()
            session.run(None, {name: r})
            ms.append((time.perf_counter() - t0) * 1e3)
        return _octet._eval_timing("octet", batch, self.threads, ms, images)

    def __call__(self, items):
        out = {k: [] for k in ("item", "node", "isa", "skipped", "timing")}
        for item, key, model, isa in zip(items["item"], items["key"], items["model"], items["isa"]):
            isa, model = str(isa) or None, int(model)
            out["item"].append(int(item))
            out["node"].append(self.node)
            if isa and isa not in self.levels:
                out["isa"].append(isa)
                out["skipped"].append(f"{isa} is not on this CPU")
                out["timing"].append("")
                continue
            session = _sessions({"m": self.models[str(key)]}, isa, self.threads)["m"]
            x, name = np.ascontiguousarray(self.inputs[model]), self.input_names[model]
            n = min(self.images, len(x))
            timing = {"batch1": self._time(session, name, x, 1, min(self.latency_images, n)),
                      "batchN": self._time(session, name, x, self.batch, n)}
            out["isa"].append(session.isa)
            out["skipped"].append("")
            out["timing"].append(json.dumps(timing))
        return {k: np.array(v) for k, v in out.items()}


def benchmark(models, precisions=("fp32", "int8"), isa_levels=None, *, batch=64, threads=1, workers=2, images=256,
              latency_images=200, warmup=3, data=None, calib=None, calib_count=1000, method="minmax",
              allow_test_calibration=False):
    """Times every (model x precision x ISA level) on a pool of Ray workers; returns a BenchmarkTable.

    precisions: fp32, int8 (static, quantized once on the driver with the calibration options) or
    dynamic. isa_levels: levels to cap the kernels at ("avx2", ...; None: each node's best); a
    level a worker's CPU lacks gives a row that says so. Each item is timed as `octet eval` times
    its latency rows: `latency_images` images one by one and `images` images in batches of `batch`,
    after `warmup` untimed runs, on `threads` threads; images come from data (default: the model
    card's dataset). Timings are only as clean as the nodes are idle: give each worker its own cores
    (workers x threads <= cores per node).
    """
    if isinstance(models, (str, os.PathLike)):
        models = [models]
    models = [os.fspath(m) for m in models]
    if _client_mode():
        options = dict(batch=batch, threads=threads, workers=workers, images=images, latency_images=latency_images,
                       warmup=warmup, data=data, calib=calib, calib_count=calib_count, method=method,
                       allow_test_calibration=allow_test_calibration)
        return BenchmarkTable(ray.get(_on_cluster.remote("benchmark", [_model_files(m) for m in models], models,
                                                         [list(precisions), isa_levels], options)))
    for p in precisions:
        if p not in ("fp32", "int8", "dynamic"):
            raise ValueError(f"precisions are fp32, int8 or dynamic, got '{p}'")
    levels = list(isa_levels) if isa_levels else [""]
    known = cpu(peaks=False)["all_levels"]
    for level in levels:
        if level and level not in known:
            raise ValueError(f"isa: unknown level '{level}' (levels: {', '.join(known)})")
    files, inputs, input_names, items = {}, [], [], []
    for mi, m in enumerate(models):
        info = _octet._eval_data(m, "" if data is None else str(data), int(images))
        inputs.append(info["inputs"])
        input_names.append(info["input"])
        with open(m, "rb") as f:
            blob = f.read()
        for p in precisions:
            if info["quantized"] and p != "int8":
                raise ValueError(f"{m} is already quantized ({info['quantized']}): it has no {p} form")
            key = f"{mi}/{p}"
            if p == "fp32" or info["quantized"]:
                files[key] = blob
            else:
                files[key], _ = _quantize(m, "dynamic" if p == "dynamic" else "static", batch,
                                          dict(calib=calib, calib_count=calib_count, method=method,
                                               allow_test_calibration=allow_test_calibration))
            for isa in levels:
                items.append({"item": len(items), "key": key, "model": mi, "precision": p, "isa": isa})
    ds = ray.data.from_items(items, override_num_blocks=len(items))
    timed = _map_batches(ds, _BenchWorker, workers, threads, 1,
                         dict(models=_shared(files), inputs=_shared(inputs), input_names=input_names, batch=batch, threads=threads,
                              images=images, latency_images=latency_images, warmup=warmup))
    results = {}
    for b in timed.iter_batches(batch_size=None, batch_format="numpy"):
        for i, node, isa, skipped, timing in zip(b["item"], b["node"], b["isa"], b["skipped"], b["timing"]):
            results[int(i)] = (str(node), str(isa), str(skipped), str(timing))
    table = BenchmarkTable()
    for item in items:
        node, isa, skipped, timing = results[item["item"]]
        row = {"model": models[item["model"]], "precision": item["precision"], "isa": isa, "node": node,
               "batch": batch, "threads": threads}
        if skipped:
            row["skipped"] = skipped
        else:
            t = json.loads(timing)
            row.update(batch1_p50_ms=t["batch1"]["per_image_ms"]["p50"],
                       batch1_mean_ms=t["batch1"]["per_image_ms"]["mean"],
                       batchN_p50_ms=t["batchN"]["per_image_ms"]["p50"],
                       batchN_mean_ms=t["batchN"]["per_image_ms"]["mean"], timing=t)
        table.append(row)
    return table
