"""The official MCP conformance suite (server mode) against examples/conformance over our own
Streamable HTTP transport, judged against interop/conformance-expected-failures.txt.

Three runs, each scored per scenario (a scenario passes when none of its checks is a FAILURE):
  default@<stable>  - `conformance server --url …` of the npm `latest` release (its default,
                      "active" suite; the legacy wire);
  default@<newest>  - the same with the newest release;
  2026-07-28@<newest> - `--requirements 2026-07-28` of the newest release, the first that ships
                      requirement sets; the scenarios the set requires and the ten of the tasks
                      extension (which this server implements) are scored, the rest (other
                      extensions, pending) are reported as INFO.

Then the skills extension's scenarios (SKILLS_SCENARIOS) of the newest release against
examples/ops, which serves a skill (the fixture serves none), scored the same way.

Prints PASS / FAIL / XFAIL (a failure the expected-failures file names) per scored scenario and
NOTE for an expected failure that now passes everywhere it ran. Exits 1 when any scenario fails
that the file does not name. Writes the scores to OUTDIR/scores.md.

usage: run.py CONFORMANCE_BINARY NODE NODE_MODULES EXPECTED_FAILURES OUTDIR
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys

BINARY, NODE, NODE_MODULES, EXPECTED, OUTDIR = map(os.path.abspath, sys.argv[1:6])


def version_of(package_dir: str) -> str:
    with open(os.path.join(package_dir, "package.json")) as f:
        return json.load(f)["version"]


STABLE = os.path.join(NODE_MODULES, "conformance-stable")
NEWEST = os.path.join(NODE_MODULES, "@modelcontextprotocol", "conformance")
SETS = [
    (f"default@{version_of(STABLE)}", STABLE, []),
    (f"default@{version_of(NEWEST)}", NEWEST, []),
    (f"2026-07-28@{version_of(NEWEST)}", NEWEST, ["--requirements", "2026-07-28"]),
]


# The tasks extension's scenarios: the 2026-07-28 requirement set runs them unscored (an
# extension is optional); this server implements the extension, so here they are scored like
# every other required scenario.
TASKS_SCENARIOS = {
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
}


# The skills extension's scenarios (SEP-2640) that judge a server serving skills; its
# `sep-2640-skills-directory` judges `resources/directory/read`, which ops does not declare
# (`directoryRead`), so it would only skip.
SKILLS_SCENARIOS = ["sep-2640-skills-enumeration", "sep-2640-skills-manifest"]
OPS = os.path.join(os.path.dirname(BINARY), "ops")


def read_expected(path: str) -> dict[str, str]:
    expected = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, reason = line.partition(" — ")
            expected[name.strip()] = reason.strip()
    return expected


def required_scenarios(package_dir: str, revision: str) -> set[str]:
    """The `server:` list of requirements/<revision>.yaml (a flat list; no YAML parser needed)."""
    names, inside = set(), False
    with open(os.path.join(package_dir, "requirements", f"{revision}.yaml")) as f:
        for line in f:
            if re.match(r"^\S", line):
                inside = line.startswith("server:")
            elif inside and (m := re.match(r"^\s+-\s+([\w./-]+)\s*$", line)):
                names.add(m.group(1))
    return names


def scenario_results(results_dir: str) -> dict[str, list[dict]]:
    out = {}
    for d in glob.glob(os.path.join(results_dir, "server-*")):
        m = re.match(r"^server-(.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d+Z$", os.path.basename(d))
        checks_file = os.path.join(d, "checks.json")
        if m and os.path.exists(checks_file):
            with open(checks_file) as f:
                out[m.group(1)] = json.load(f)
    return out


def start_server(binary: str = BINARY) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([binary, "--http", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    m = re.search(r"(http://\S+)", line)
    if not m:
        proc.kill()
        raise SystemExit(f"FAIL conformance: the server did not start: {line!r}")
    return proc, m.group(1)


def run_skills() -> int:
    """The skills scenarios against examples/ops: how many failed."""
    proc, url = start_server(OPS)
    results_dir = os.path.join(OUTDIR, "skills")
    cli = os.path.join(NEWEST, "dist", "index.js")
    try:
        for name in SKILLS_SCENARIOS:
            with open(os.path.join(OUTDIR, f"skills-{name}.log"), "w") as log:
                subprocess.run(
                    [NODE, cli, "server", "--url", url, "--scenario", name, "-o", results_dir],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    timeout=600,
                    cwd=OUTDIR,
                )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    results = scenario_results(results_dir)
    failed = 0
    for name in SKILLS_SCENARIOS:
        checks = results.get(name)
        failures = [c for c in checks or [] if c.get("status") == "FAILURE"]
        if checks is None:
            failed += 1
            print(f"FAIL conformance[skills, ops] {name}: the suite produced no result; see {OUTDIR}/skills-{name}.log")
        elif failures:
            failed += 1
            first = failures[0]
            print(f"FAIL conformance[skills, ops] {name}: {first.get('id')}: {(first.get('errorMessage') or '').strip()[:300]}")
        else:
            print(f"PASS conformance[skills, ops] {name}")
    return failed


def main() -> int:
    expected = read_expected(EXPECTED)
    shutil.rmtree(OUTDIR, ignore_errors=True)
    os.makedirs(OUTDIR)
    proc, url = start_server()
    unexpected = 0
    ran: set[str] = set()
    failed_somewhere: set[str] = set()
    scores = []
    try:
        for label, package_dir, extra in SETS:
            results_dir = os.path.join(OUTDIR, label)
            cli = os.path.join(package_dir, "dist", "index.js")
            with open(os.path.join(OUTDIR, f"{label}.log"), "w") as log:
                run = subprocess.run(
                    [NODE, cli, "server", "--url", url, "-o", results_dir, *extra],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    timeout=600,
                    cwd=OUTDIR,
                )
            results = scenario_results(results_dir)
            if not results:
                print(f"FAIL conformance[{label}] the suite produced no results (exit {run.returncode}); see {OUTDIR}/{label}.log")
                unexpected += 1
                continue
            scored = (
                required_scenarios(package_dir, "2026-07-28") | TASKS_SCENARIOS
                if "--requirements" in extra
                else set(results)
            )
            n_pass = n_fail = n_xfail = 0
            for name in sorted(results):
                failures = [c for c in results[name] if c.get("status") == "FAILURE"]
                ok = not failures
                if name not in scored:
                    print(f"INFO conformance[{label}] {name} (run, not scored): {'passes' if ok else 'fails'}")
                    continue
                ran.add(name)
                if ok:
                    n_pass += 1
                    print(f"PASS conformance[{label}] {name}")
                    continue
                n_fail += 1
                failed_somewhere.add(name)
                first = failures[0]
                why = f"{first.get('id')}: {(first.get('errorMessage') or '').strip()[:300]}"
                if name in expected:
                    n_xfail += 1
                    print(f"XFAIL conformance[{label}] {name} — {expected[name]} [{why}]")
                else:
                    unexpected += 1
                    print(f"FAIL conformance[{label}] {name}: {why}")
            missing = sorted(scored - set(results))
            for name in missing:
                unexpected += 1
                print(f"FAIL conformance[{label}] {name}: required but the suite produced no result for it")
            scores.append((label, n_pass, n_fail, n_xfail, len(scored)))
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    unexpected += run_skills()

    for name in sorted(expected):
        if name not in ran:
            print(f"NOTE conformance: {name} is listed as an expected failure but ran in no set")
        elif name not in failed_somewhere:
            print(f"NOTE conformance: {name} is listed as an expected failure but now passes everywhere it ran — remove it from {os.path.basename(EXPECTED)}")

    lines = [
        "| requirement set | scenarios | passed | failed | of which expected |",
        "|---|---|---|---|---|",
    ]
    for label, n_pass, n_fail, n_xfail, total in scores:
        lines.append(f"| {label} | {total} | {n_pass} | {n_fail} | {n_xfail} |")
        print(f"conformance[{label}]: {n_pass} passed, {n_fail} failed ({n_xfail} expected failures) of {total} scored scenarios")
    with open(os.path.join(OUTDIR, "scores.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
