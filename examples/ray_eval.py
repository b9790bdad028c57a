"""`octet eval` on a Ray cluster: the same report, the work spread over Ray workers.

    # a local Ray instance of 2 CPUs, 2 workers, the bundled TinyNet on its 10,000 test images
    PYTHONPATH=build/python third_party/ray/venv/bin/python examples/ray_eval.py
    # FP32 beside INT8 (quantized once on the driver), on an existing cluster (Ray Client: the
    # cluster's token in RAY_AUTH_TOKEN or ~/.ray/auth_token)
    RAY_AUTH_MODE=token python examples/ray_eval.py models/tinynet.onnx --precision both \
        --address ray://head:10001 --workers 16

Prints what `octet eval MODEL --precision P` prints for the same images (with --json, its JSON):
the same top-1, top-5, per-class figures and confusion matrix; latency is the workers' per-batch
time. --benchmark adds a table of every precision x ISA level, each timed on one worker.
"""
import argparse
import json
import sys

import ray

import octet
import octet.ray


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", nargs="?", default="models/tinynet.onnx", help="ONNX model (default: %(default)s)")
    ap.add_argument("--data", help="dataset spec as octet eval's --data (default: the model card's)")
    ap.add_argument("--precision", choices=("fp32", "int8", "dynamic", "both", "all"),
                    help="as octet eval's (default: fp32; int8 for a quantized model)")
    ap.add_argument("--limit", type=int, help="evaluate at most N images")
    ap.add_argument("--batch", type=int, default=64, help="images per run on a worker (default: %(default)s)")
    ap.add_argument("--workers", type=int, default=2, help="Ray workers (default: %(default)s)")
    ap.add_argument("--threads", type=int, default=1, help="octet threads (and Ray CPUs) per worker")
    ap.add_argument("--isa", help="highest ISA level the workers' kernels may use (default: each CPU's best)")
    ap.add_argument("--address", help="an existing Ray cluster: ray://HOST:10001 or auto (default: start a "
                                      "local instance of --num-cpus CPUs)")
    ap.add_argument("--num-cpus", type=int, default=2, help="CPUs of the local instance (default: %(default)s)")
    ap.add_argument("--temp-dir", help="where the local instance keeps its session files (default: Ray's)")
    ap.add_argument("--benchmark", metavar="LEVELS", help="also time fp32 and int8 at these ISA levels "
                                                          "(comma-separated, or 'all' for every level of this CPU)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON (as octet eval --json)")
    args = ap.parse_args(argv)

    from ray.data import DataContext
    DataContext.get_current().enable_progress_bars = False
    if args.address:
        ray.init(address=args.address, log_to_driver=False)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False,
                 _temp_dir=args.temp_dir or None)
    try:
        report = octet.ray.evaluate(args.model, args.data, precision=args.precision, limit=args.limit,
                                    batch=args.batch, workers=args.workers, threads=args.threads, isa=args.isa)
        if not args.json:
            print(report, flush=True)
        if args.benchmark:
            levels = octet.cpu(peaks=False)["levels"] if args.benchmark == "all" else args.benchmark.split(",")
            quantized = report.get("int8_model", {}).get("source") == "model"
            table = octet.ray.benchmark([args.model], ["int8"] if quantized else ["fp32", "int8"], levels,
                                        batch=args.batch, threads=args.threads, workers=args.workers, data=args.data)
            if args.json:
                report["benchmark"] = table
            else:
                print(f"\n{table}", flush=True)
        if args.json:
            print(json.dumps(report, indent=2), flush=True)
    except (octet.Error, ValueError, OSError) as e:
        print(f"ray_eval.py: {e}", file=sys.stderr)
        return 1
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
