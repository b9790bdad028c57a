#!/usr/bin/env python3
"""Static throughput estimates of the AArch64 microkernels' inner loops with llvm-mca.

Nothing here can time an Arm core (qemu is not a timer), so this compiles each kernel file of
kernels/arm the way the cross build does (the compile command of an AArch64 build folder, with -S),
finds in every exported kernel function its hottest loop (the single-block loop with the most
multiply-accumulate instructions), and asks llvm-mca-14 how many cycles one iteration takes on
each CPU model. MACs per cycle = the loop's multiply-accumulates / llvm-mca's block reciprocal
throughput.

LLVM 14 has few real AArch64 scheduling models: cortex-a72, -a76, neoverse-n1/-n2/-v1 and
cortex-a710 all use its Cortex-A57 model, apple-m1/-a14 the Cyclone (Apple A7) model, cortex-a55
its own. Neither the A57 nor the Cyclone model knows SDOT / SMMLA (they are costed as generic
vector ALU ops), so read the figures as a comparison of loop shapes under one model, not as a
prediction. The model behind each -mcpu is printed with the table.

  bench/arm_mca.py [--build build-arm] [--cpu cortex-a55 --cpu cortex-a72 --cpu apple-m1] [--epilogue | --depthwise]

--epilogue instead compares the INT8 tile epilogue's two ways on one 4x16 tile
(bench/arm_epilogue_mca.cc, compiled with the neondot kernel's flags): cycles of each function's
straight-line body. --depthwise compares the INT8 depthwise kernels (SMLAL, SDOT kw4) per output
pixel and 16 channels on 3x3, 5x5 and 7x7 layers.
"""
import argparse
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

# Multiply-accumulates of one instruction, by mnemonic and destination arrangement.
MACS = {
    ("smmla", "4s"): 32, ("ummla", "4s"): 32, ("usmmla", "4s"): 32,
    ("sdot", "4s"): 16, ("udot", "4s"): 16, ("usdot", "4s"): 16,
    ("smlal", "4s"): 4, ("smlal2", "4s"): 4, ("umlal", "4s"): 4, ("umlal2", "4s"): 4,
    ("smlal", "8h"): 8, ("smlal2", "8h"): 8,
    ("fmla", "4s"): 4, ("fmla", "2s"): 2,
}
KERNEL_FILES = ["q8_gemm__neon", "q8_gemm__neondot", "q8_gemm__neoni8mm", "f32_gemm__neon"]
MODEL_OF = {"A57": "Cortex-A57 model", "Cy": "Cyclone (Apple A7) model", "CortexA55": "Cortex-A55 model"}


def compile_to_asm(build: Path, name: str, out: Path, source: Path = None) -> None:
    """The kernel file's compile command as -S (or, given `source`, that file with its flags)."""
    target = f"kernels/CMakeFiles/octet_kernels.dir/arm/{name}.cc.o"
    cmd = subprocess.run(["ninja", "-C", str(build), "-t", "commands", target], check=True, capture_output=True,
                         text=True).stdout.strip().splitlines()[-1]
    args = [a for a in shlex.split(cmd) if a != "ccache" and not a.endswith("ccache")]
    clean, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MT", "-MF"):
            skip = True
            continue
        if a in ("-MD", "-c"):
            continue
        if source is not None and a.endswith(f"arm/{name}.cc"):
            a = str(source)
        clean.append(a)
    subprocess.run(clean + ["-S", "-o", str(out)], check=True, cwd=build)


def functions(asm: str):
    """(mangled name, body lines) of every function (the tile templates are not inlined into the
    exported kernels, which only call them)."""
    lines = asm.splitlines()
    globals_ = {m.group(1) for m in re.finditer(r"^\s*\.type\s+([^,\s]+),\s*%function", asm, re.M)}
    i = 0
    while i < len(lines):
        m = re.match(r"^(\S+):$", lines[i])
        if m and m.group(1) in globals_:
            name, body = m.group(1), []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(".size"):
                body.append(lines[i])
                i += 1
            yield name, body
        i += 1


def macs_of(line: str) -> int:
    m = re.match(r"\s*([a-z0-9]+)\s+v\d+\.(\w+)", line)
    return MACS.get((m.group(1), m.group(2)), 0) if m else 0


def hottest_loop(body):
    """The instructions of the single-block loop with the most MACs (label to its back branch)."""
    best = None
    for i, line in enumerate(body):
        m = re.match(r"^(\.L\w+):$", line)
        if not m:
            continue
        label, insns = m.group(1), []
        for line2 in body[i + 1:]:
            s = line2.strip()
            if not s or s.startswith(".") and not s.startswith(".L") or s.startswith("//"):
                continue
            if re.match(r"^\.L\w+:$", s):
                break  # another block starts: not a single-block loop
            insns.append(s)
            if re.match(r"^(b|b\.?(eq|ne|hi|hs|lo|ls|lt|le|gt|ge|mi|pl|cs|cc|vs|vc)|cbn?z|tbn?z)\s", s):
                if s.endswith(label):
                    macs = sum(macs_of(x) for x in insns)
                    if macs and (best is None or macs > best[1]):
                        best = (insns, macs)
                break
    return best


def mca(insns, cpu: str):
    with tempfile.NamedTemporaryFile("w", suffix=".s") as f:
        f.write("\n".join(insns) + "\n")
        f.flush()
        out = subprocess.run(["llvm-mca-14", "-mtriple=aarch64", f"-mcpu={cpu}", "-mattr=+dotprod,+i8mm",
                              "-iterations=200", f.name], check=True, capture_output=True, text=True).stdout
    rt = float(re.search(r"Block RThroughput:\s*([\d.]+)", out).group(1))
    cycles = int(re.search(r"Total Cycles:\s*(\d+)", out).group(1)) / 200.0
    unit = re.search(r"\[\d[.\d]*\]\s+-\s+([A-Za-z0-9]+?)Unit", out)
    return rt, cycles, MODEL_OF.get(unit.group(1) if unit else "", "unknown model")


def epilogue_table(build: Path, cpus) -> int:
    """Cycles of one 4x16 tile's epilogue per vector and by quads (bench/arm_epilogue_mca.cc)."""
    source = Path(__file__).resolve().parent / "arm_epilogue_mca.cc"
    with tempfile.TemporaryDirectory() as tmp:
        asm_path = Path(tmp) / "epilogue.s"
        compile_to_asm(build, "q8_gemm__neondot", asm_path, source)
        bodies = dict(functions(asm_path.read_text()))
    print("| epilogue of one 4x16 tile (64 outputs) | instructions | " + " | ".join(f"cycles {c}" for c in cpus) + " |")
    print("|---|---:|" + "---:|" * len(cpus))
    models = {}
    for name in ("epilogue_per_vector", "epilogue_quads"):
        insns = [l.strip() for l in bodies[name]
                 if l.strip() and not l.strip().startswith((".", "//")) and not l.strip().endswith(":")
                 and not re.match(r"(ret|b|b\.\w+|cbn?z|tbn?z)\b", l.strip())]
        cells = []
        for cpu in cpus:
            rt, cycles, model = mca(insns, cpu)
            models[cpu] = model
            cells.append(f"{max(rt, cycles):.0f}")
        print(f"| {name.removeprefix('epilogue_').replace('_', ' ')} | {len(insns)} | " + " | ".join(cells) + " |")
    print()
    print("llvm-mca-14 models: " + ", ".join(f"{c}: {m}" for c, m in models.items()) + ".")
    return 0


def basic_blocks(asm: str):
    """The straight-line blocks of a file's code: split at labels and after branches."""
    blocks, cur = [], []
    for line in asm.splitlines():
        s = line.strip()
        if re.match(r"^[\w.$]+:$", s) or s.startswith(".size"):
            if cur:
                blocks.append(cur)
            cur = []
            continue
        if not s or s.startswith((".", "//")):
            continue
        if re.match(r"^(ret|b|b\.\w+|cbn?z|tbn?z|br)\b", s):
            if cur:
                blocks.append(cur)
            cur = []
            continue
        cur.append(s)
    return blocks + ([cur] if cur else [])


def depthwise_table(build: Path, cpus) -> int:
    """Instructions (and llvm-mca cycles) per output pixel and 16 channels of the two AArch64
    INT8 depthwise kernels. kw4 (neondot): its step of 4 pixels x 4 channels for a 3x3 / 5x5 /
    7x7 (12, 40, 56 SDOTs: the same count per pixel and 16 channels), plus the interior row
    build per entry and 16 channels (one input row per output row at stride 1). SMLAL (neon): its
    tap loop (4 pixels x 8 channels) times the taps, plus its per-pixel store of 8 channels."""
    with tempfile.TemporaryDirectory() as tmp:
        dot, neon = Path(tmp) / "dot.s", Path(tmp) / "neon.s"
        compile_to_asm(build, "q8_dwconv__neondot", dot)
        compile_to_asm(build, "q8_dwconv__neon", neon)
        dot_blocks, neon_blocks = basic_blocks(dot.read_text()), basic_blocks(neon.read_text())
    count = lambda b, op: sum(1 for i in b if i.split()[0] == op)
    stores = lambda b: sum(1 for i in b if i.split()[0] in ("st1", "str", "stp"))
    # the stride-1 interior loop: one new input vector per entry (a q load, no memcpy of a tail),
    # its pair zipped with the last one, four vectors stored; the u8 form adds the flip
    builds = sorted((b for b in dot_blocks if sum(1 for i in b if i.startswith("zip")) == 6 and stores(b) >= 2
                     and any(re.match(r"ldr\s+q", i) for i in b) and not any("memcpy" in i for i in b)), key=len)
    build_insns = len(builds[-1]) if builds else 0
    taps_loop = min((b for b in neon_blocks if count(b, "smlal") + count(b, "smlal2") == 8
                     and count(b, "fcvtns") == 0), key=len)
    stores_neon = sorted((b for b in neon_blocks if count(b, "fcvtns") == 2), key=len)
    store_px = stores_neon[len(stores_neon) // 2]  # the median store block of one pixel, 8 channels
    print("| layer | kernel (level) | instructions | " + " | ".join(f"cycles {c}" for c in cpus) + " |")
    print("|---|---|---:|" + "---:|" * len(cpus))
    for name, taps in (("3x3", 9), ("5x5", 25), ("7x7", 49)):
        words = {9: 3, 25: 10, 49: 14}[taps]
        step = min((b for b in dot_blocks if count(b, "sdot") == 4 * words), key=len, default=None)
        if step is None:
            continue
        cells = [f"{mca(step, c)[1] + (mca(builds[-1], c)[1] if builds else 0):.0f}" for c in cpus]
        print(f"| {name} | q8_dwconv_c16kw4 (neondot) | {len(step)} + {build_insns} | " + " | ".join(cells) + " |")
        cells = [f"{taps * mca(taps_loop, c)[1] * 2 / 4 + 2 * mca(store_px, c)[1]:.0f}" for c in cpus]
        neon_insns = taps * len(taps_loop) * 2 / 4 + 2 * len(store_px)
        print(f"| {name} | q8_dwconv_c8 (neon) | {neon_insns:.0f} | " + " | ".join(cells) + " |")
    print()
    print(f"kw4: the step's instructions + one interior row-build entry's ({build_insns}); SMLAL: "
          f"{len(taps_loop)} a tap for 4 pixels x 8 channels, {len(store_px)} to store a pixel's 8 channels. "
          "Cycles: llvm-mca-14's total per iteration of those blocks (the A57 and Cyclone models cost SDOT "
          "as a plain vector operation).")
    return 0


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.splitlines()
    pretty = []
    for o in out:
        head = re.sub(r"\(.*", "", o.replace("(anonymous namespace)::", ""))  # drop the parameters
        level = re.search(r"::(neon\w*)::", head)
        pretty.append(head.split("::")[-1] + (f" ({level.group(1)})" if level else ""))
    return pretty


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build-arm", help="an AArch64 build folder (tools/arm/test.sh makes build-arm)")
    ap.add_argument("--cpu", action="append", help="llvm-mca -mcpu models (default: cortex-a55, cortex-a72, apple-m1)")
    ap.add_argument("--epilogue", action="store_true", help="the INT8 tile epilogue's two ways instead of the loops")
    ap.add_argument("--depthwise", action="store_true",
                    help="the INT8 depthwise kernels, SMLAL against SDOT kw4, per output pixel and 16 channels")
    a = ap.parse_args()
    cpus = a.cpu or ["cortex-a55", "cortex-a72", "apple-m1"]
    build = Path(a.build).resolve()
    if not (build / "build.ninja").exists():
        print(f"arm_mca: {build} is not a configured build folder (run tools/arm/test.sh first)", file=sys.stderr)
        return 2
    if a.epilogue:
        return epilogue_table(build, cpus)
    if a.depthwise:
        return depthwise_table(build, cpus)
    rows, models = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in KERNEL_FILES:
            asm_path = Path(tmp) / f"{name}.s"
            compile_to_asm(build, name, asm_path)
            asm = asm_path.read_text()
            bodies = dict(functions(asm))
            exported = [n for n in re.findall(r"^\s*\.global\s+(\S+)", asm, re.M) if n in bodies]
            for mangled, pretty in zip(exported, demangle(exported)):
                if pretty.split(" ")[0].endswith("_f32"):
                    continue  # the float-output twin runs the same inner loop
                loop = hottest_loop(bodies[mangled])
                if loop is None:  # a thunk: follow its tail call into the tile template
                    call = re.search(r"^\s*b\s+(\S+)$", "\n".join(bodies[mangled]), re.M)
                    loop = hottest_loop(bodies.get(call.group(1), [])) if call else None
                if loop is None:
                    continue
                insns, macs = loop
                cells = []
                for cpu in cpus:
                    rt, cycles, model = mca(insns, cpu)
                    models[cpu] = model
                    cells.append(f"{macs / max(rt, cycles):.1f}")
                rows.append((pretty, len(insns), macs, cells))
    print("| kernel (level) | loop instructions | MACs per iteration | " +
          " | ".join(f"MACs/cycle {c}" for c in cpus) + " |")
    print("|---|---:|---:|" + "---:|" * len(cpus))
    for pretty, n, macs, cells in rows:
        print(f"| {pretty} | {n} | {macs} | " + " | ".join(cells) + " |")
    print()
    print("llvm-mca-14 models: " + ", ".join(f"{c}: {m}" for c, m in models.items()) +
          ". MACs/cycle uses the larger of the block reciprocal throughput and the simulated cycles per iteration.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
