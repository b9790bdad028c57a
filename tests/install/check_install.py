"""An installed octet (the pip wheel, the Debian package) against the build tree it came from:
its command and its Python module must answer as the tree's do, byte for byte, when run from
outside the source tree, and the module must be the installed one.

    check_install.py --build BUILD --work DIR --cli INSTALLED_OCTET --python INSTALLED_PYTHON
                     [--pythonpath DIR] --package-under DIR
"""
import argparse
import os
import pathlib
import subprocess
import sys

MODEL = pathlib.Path(__file__).resolve().parents[2] / "models" / "tinynet.onnx"

# Runs in the interpreter under test: where octet comes from, its version, and TinyNet's logits
# for a fixed batch, saved for the comparison.
PYTHON_CHECK = """
import importlib.metadata, sys
import numpy as np
import octet
print(octet.__file__)
print(octet.__version__)
try:
    print(importlib.metadata.version("octet"))
except importlib.metadata.PackageNotFoundError:
    print("-")
session = octet.Session(sys.argv[1])
images = np.random.default_rng(7).random((3, 1, 28, 28), dtype=np.float32)
np.save(sys.argv[2], session.run({"input": images})["logits"])
"""


def run(command, env=None, cwd=None):
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, env=env, cwd=cwd)
    if done.returncode != 0:
        sys.exit(f"FAIL: {' '.join(map(str, command))} exited with {done.returncode}:\n{done.stdout}{done.stderr}")
    return done.stdout


def same_files(a, b, what):
    if a.read_bytes() != b.read_bytes():
        sys.exit(f"FAIL: {what}: {a} and {b} differ")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=pathlib.Path, required=True)
    parser.add_argument("--work", type=pathlib.Path, required=True)
    parser.add_argument("--cli", type=pathlib.Path, required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--pythonpath")
    parser.add_argument("--package-under", type=pathlib.Path, required=True)
    parser.add_argument("--version", help="the distribution's version pip must report")
    args = parser.parse_args()
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    tree_cli = args.build / "apps" / "octet"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "OCTET_ISA")}

    version = run([args.cli, "--version"], env=env, cwd=work)
    print(f"installed: {version.strip()}")
    # "octet 0.11 (build date)": the version must match; the date is the compile's.
    if version.split()[:2] != run([tree_cli, "--version"], env=env, cwd=work).split()[:2]:
        sys.exit("FAIL: octet --version differs from the build tree's")
    info = run([args.cli, "info", MODEL], env=env, cwd=work)
    if info != run([tree_cli, "info", MODEL], env=env, cwd=work):
        sys.exit("FAIL: octet info differs from the build tree's")
    print(f"octet info: {len(info.splitlines())} lines as the build tree's")
    for cli, out in ((args.cli, "installed"), (tree_cli, "tree")):
        run([cli, "run", MODEL, "--random", "--seed", "7", "--batch", "3", "--output-dir", work / f"cli_{out}"],
            env=env, cwd=work)
    same_files(work / "cli_installed" / "logits.npy", work / "cli_tree" / "logits.npy", "octet run's logits")
    print("octet run --random --seed 7 --batch 3: logits identical to the build tree's")

    installed_env = dict(env, PYTHONDONTWRITEBYTECODE="1")
    if args.pythonpath:
        installed_env["PYTHONPATH"] = args.pythonpath
    lines = run([args.python, "-c", PYTHON_CHECK, MODEL, work / "py_installed.npy"], env=installed_env,
                cwd=work).split()
    module, module_version, dist_version = lines[:3]
    print(f"import octet: {module} (octet.__version__ {module_version}, distribution {dist_version})")
    if not pathlib.Path(module).resolve().is_relative_to(args.package_under.resolve()):
        sys.exit(f"FAIL: octet was imported from {module}, not from under {args.package_under}")
    if args.version and dist_version != args.version:
        sys.exit(f"FAIL: the installed distribution says version {dist_version}, CMakeLists.txt {args.version}")
    run([sys.executable, "-c", PYTHON_CHECK, MODEL, work / "py_tree.npy"],
        env=dict(env, PYTHONPATH=str(args.build / "python"), PYTHONDONTWRITEBYTECODE="1"), cwd=work)
    same_files(work / "py_installed.npy", work / "py_tree.npy", "octet.Session's logits")
    print("octet.Session(tinynet).run: logits identical to the build tree's module")


if __name__ == "__main__":
    main()
