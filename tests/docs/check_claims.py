"""docs/claims.md cannot drift from the suite: every test it names exists.

    check_claims.py --source SOURCE_DIR --ctest CTEST --build BUILD_DIR

Reads the table of docs/claims.md. In its last column, a `name` (with `*` as a wildcard) must
match a ctest entry of BUILD_DIR, a `stage:NAME` must be a stage tools/test.sh tallies, a
`source:Suite.Name` a GoogleTest test defined under tests/ (one that is not a ctest entry in CI).
A row without a test must say why in its strength column (**not tested**, **fails**,
**not in CI**). Also every `Suite.Name` that README.md or docs/ cite, for a Suite the suite has,
must match a ctest entry. Exit 1 with every problem listed.
"""
import argparse
import fnmatch
import json
import pathlib
import re
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--ctest", required=True)
    ap.add_argument("--build", required=True)
    a = ap.parse_args()
    source = pathlib.Path(a.source)
    shown = subprocess.run([a.ctest, "--test-dir", a.build, "--show-only=json-v1"], capture_output=True, text=True)
    if shown.returncode != 0:
        print(f"check_claims: ctest --show-only failed: {shown.stderr}")
        return 1
    names = [t["name"].split("  # ")[0] for t in json.loads(shown.stdout)["tests"]]
    suites = {n.split(".")[0].split("/")[-1] for n in names if "." in n}
    test_sh = (source / "tools" / "test.sh").read_text()
    stages = {s.strip() for s in re.findall(r'tally\+=\("([^"=$]+)[=$]', test_sh) + re.findall(r'--note "([^:"]+):', test_sh)}
    sources = "\n".join(p.read_text(errors="replace") for p in (source / "tests").rglob("*.cc"))

    problems = []
    rows = 0
    for line in (source / "docs" / "claims.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) < 3 or cells[0] in ("claim (where)",) or set(cells[0]) <= set("-"):
            continue
        rows += 1
        tests = re.findall(r"`([^`]+)`", cells[-1])
        if not tests and not re.search(r"\*\*(not tested|fails|not in CI)", cells[-2]):
            problems.append(f"claim without a test or a reason: {cells[0]}")
        for t in tests:
            if t.startswith("stage:"):
                if t[len("stage:"):] not in stages:
                    problems.append(f"{t}: tools/test.sh tallies no such stage (it has: {', '.join(sorted(stages))})")
            elif t.startswith("source:"):
                suite, _, test = t[len("source:"):].partition(".")
                if not re.search(r"TEST(_F|_P)?\(\s*" + re.escape(suite) + r",\s*" + re.escape(test) + r"\)", sources):
                    problems.append(f"{t}: no such test under tests/")
            elif not any(fnmatch.fnmatchcase(n, t) for n in names):
                problems.append(f"`{t}` matches no ctest entry")
    if rows < 10:
        problems.append(f"docs/claims.md: only {rows} table rows read; is the table still there?")

    # Tests cited in the prose, e.g. `QOpsParity.QLinearSoftmax*`.
    for doc in [source / "README.md", *sorted((source / "docs").glob("*.md"))]:
        for t in re.findall(r"`([A-Z][A-Za-z0-9]+\.[A-Z][A-Za-z0-9_*/]*)`", doc.read_text()):
            if t.split(".")[0] in suites and not any(fnmatch.fnmatchcase(n.split("/", 1)[-1] if "/" in n.split(".")[0] else n, t)
                                                     or fnmatch.fnmatchcase(n, t) for n in names):
                problems.append(f"{doc.relative_to(source)} cites `{t}`, which matches no ctest entry")

    for p in problems:
        print("check_claims:", p)
    print(f"check_claims: {rows} claims, {len(names)} ctest entries, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
