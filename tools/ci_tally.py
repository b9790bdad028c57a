#!/usr/bin/env python3
"""The tally tools/test.sh prints at its end: passed / failed / skipped per stage, from the JUnit
files ctest writes (`ctest --output-junit FILE`), with every skip listed.

    tools/ci_tally.py [--note "STAGE: text"]... "STAGE=FILE.xml"...

A skip fails CI (exit 1): what CI needs, tools/setup.sh installs. Two kinds of skip are not
counted as skips, because no setup can change them (tests/util/skip_reasons.h,
tests/simd/simd_test_util.h):
  - "ISA not on this CPU: LEVEL...": a test, or a microkernel a sweep prints, needs an
    instruction-set level this CPU lacks (AVX-512, VNNI, AVX-VNNI, ...). Listed at the end
    under "not tested on this machine";
  - "ISA tested on a lesser CPU: ...": the AArch64 stage runs the kernel tests under CPU models
    of growing levels, each testing only the levels the one before it lacked.
A test that failed or did not run for any other reason (no executable, a disabled test) is
counted as failed.
Exit: 0 when nothing failed or skipped, 1 otherwise, 2 on bad usage or an unreadable file.
"""
import collections
import re
import sys
import xml.etree.ElementTree as ET

NOT_ON_CPU = "ISA not on this CPU: "
TESTED_BEFORE = "ISA tested on a lesser CPU: "

# gtest: "file:line: Skipped\n<message>\n[  SKIPPED ]"; pytest -rs: "SKIPPED [1] file:line: why";
# the conformance runner and scripts: "...: SKIP: why".
GTEST_SKIP = re.compile(r": Skipped\n(.*?)\n\[  SKIPPED \]", re.S)
PYTEST_SKIP = re.compile(r"^SKIPPED \[\d+\] (.*)$", re.M)
SCRIPT_SKIP = re.compile(r"SKIP: (.*)$", re.M)
# A microkernel a sweep left out: "ISA not on this CPU: avx512 f32_gemm_... (this CPU lacks it)".
KERNEL_LINE = re.compile(r"^" + re.escape(NOT_ON_CPU) + r"(\S+) (\S+) \(", re.M)
# A level this CPU lacks, printed by Isa.ScalarAlwaysRunsAndActiveIsSupported: "... avx512 (level)".
LEVEL_LINE = re.compile(r"^" + re.escape(NOT_ON_CPU) + r"(\S+) \(level\)$", re.M)
LEVEL_PRESENT = re.compile(r"^ISA on this CPU: (\S+) \(level\)$", re.M)


def skip_reason(out):
    for pattern in (GTEST_SKIP, PYTEST_SKIP, SCRIPT_SKIP):
        m = pattern.search(out)
        if m:
            return m.group(1).strip()
    return "(no reason printed)"


LEVELS = {"avx2", "avxvnni", "avx256vnni", "avx512", "avx512vnni", "avx512amx", "neon", "neondot", "neoni8mm"}


def levels_of(reason):
    """The levels named after the ISA prefix ('ISA not on this CPU: avx512,avxvnni: ...'), or
    'any SIMD level' when it names none (a CPU with no level octet has kernels for)."""
    head = reason[len(NOT_ON_CPU):].split(":")[0]
    return [level for level in re.split(r"[ ,]+", head) if level in LEVELS] or ["any SIMD level"]


def main(argv):
    notes, stages = [], []
    args = iter(argv[1:])
    for a in args:
        if a == "--note":
            notes.append(next(args, ""))
        elif "=" in a:
            stages.append(a.split("=", 1))
        else:
            print(__doc__, file=sys.stderr)
            return 2

    rows, skips, failures = [], [], []
    missing_isa_tests = collections.defaultdict(list)  # level -> tests skipped for it
    missing_isa_kernels = collections.defaultdict(set)  # level -> microkernels left out
    tested_before = []
    present_levels = set()  # levels some stage's CPU has (AArch64: one of its CPU models)
    for stage, path in stages:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as e:
            print(f"ci_tally: {stage}: cannot read {path}: {e}", file=sys.stderr)
            return 2
        count = collections.Counter()
        for case in root.iter("testcase"):
            name = case.get("name")
            out = "".join(case.find("system-out").itertext()) if case.find("system-out") is not None else ""
            for level, kernel in KERNEL_LINE.findall(out):
                missing_isa_kernels[level].add(kernel)
            for level in LEVEL_LINE.findall(out):
                missing_isa_kernels.setdefault(level, set())
            present_levels.update(LEVEL_PRESENT.findall(out))
            status = case.get("status")
            if case.find("failure") is not None or status == "fail":
                count["failed"] += 1
                failures.append((stage, name))
            elif status == "run":
                count["passed"] += 1
            else:  # "notrun": skipped (a SKIP_* property matched), disabled, or no executable
                skipped = case.find("skipped")
                message = skipped.get("message", "") if skipped is not None else ""
                if not message.startswith("SKIP_"):  # not a test that reported a skip: it never ran
                    count["failed"] += 1
                    failures.append((stage, f"{name} (did not run: {message or status})"))
                    continue
                reason = skip_reason(out)
                if reason.startswith(NOT_ON_CPU):
                    count["not on this CPU"] += 1
                    for level in levels_of(reason):
                        missing_isa_tests[level].append(f"{name} [{stage}]")
                elif reason.startswith(TESTED_BEFORE):
                    count["tested on a lesser CPU"] += 1
                    tested_before.append(f"{name} [{stage}]")
                else:
                    count["skipped"] += 1
                    skips.append((stage, name, reason))
        rows.append((stage, count))

    print("== tally")
    width = max([len(s) for s, _ in rows] + [5])
    print(f"  {'stage':<{width}}  {'passed':>7}  {'failed':>7}  {'skipped':>7}  {'ISA not on this CPU':>19}"
          f"  {'tested on a lesser CPU':>22}")
    for stage, c in rows:
        print(f"  {stage:<{width}}  {c['passed']:>7}  {c['failed']:>7}  {c['skipped']:>7}  "
              f"{c['not on this CPU']:>19}  {c['tested on a lesser CPU']:>22}")
    for note in notes:
        print(f"  {note}")
    if failures:
        print(f"failed ({len(failures)}):")
        for stage, name in failures:
            print(f"  [{stage}] {name}")
    if skips:
        print(f"skipped ({len(skips)}; a skip fails CI: tools/setup.sh must install what the test needs):")
        for stage, name, reason in skips:
            print(f"  [{stage}] {name}: {reason}")
    levels = sorted((set(missing_isa_tests) | set(missing_isa_kernels)) - present_levels)
    if levels:
        print("not tested on this machine (ISA not on this CPU): " + ", ".join(levels))
        for level in levels:
            kernels = sorted(missing_isa_kernels.get(level, ()))
            tests = missing_isa_tests.get(level, [])
            line = f"  {level}: {len(kernels)} microkernels"
            if kernels:
                line += " (" + ", ".join(kernels[:4]) + (", ..." if len(kernels) > 4 else "") + ")"
            if tests:
                line += f"; tests skipped for it: {', '.join(tests)}"
            print(line)
    if tested_before:
        print(f"tested under a lesser CPU model of the same stage: {len(tested_before)} tests")
    if failures or skips:
        print(f"== CI fails: {len(failures)} failed, {len(skips)} skipped")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
