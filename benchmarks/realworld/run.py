"""Migrate, check and verify the cases prepare.py laid out; print a row per case and who owns a failure.

Usage: python run.py OUT_DIR [--only a,b] [--jobs 1] [--runtime torch-xla|torch-tpu] [--keep RUNS]
                     [--no-verify] [--cost] [--steps 10] [--timeout 600] [--results FILE]
                     [--table] [--reclassify]

For each case (OUT_DIR/cases.json, written by prepare.py):
  1. migrate a copy of its folder with xla-migrate (write mode) under RUNS/<case>/migrated, check
     that every .py compiles and that a second run changes nothing;
  2. cut the case script into a notebook (a cell a top-level statement, a markdown cell and a
     `%matplotlib inline` cell between) and check that `xla-migrate --diff` on it exits 0 or 1;
  3. `xla-migrate verify SCRIPT --steps N --json ... --project CASE -- ARGS` of the original, in its folder,
     and again with --unsafe-fixes where that failed and the findings name a fix held back;
     with --cost, time the two runs as written alone too (verify --precision native --no-tpu-report),
     for verify's cost against them;
  4. for a failure, guess the owner (rewriter / harness / runtime / environment / script) from
     the report and the logs, running the original plainly under verify's CUDA emulation where
     the reference failed.
Writes RUNS/results.json (or --results) and prints a markdown table. PYTHONPATH gets /work/tv
(torchvision and the small pure-Python packages some cases import) where it exists, or --pythonpath.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from notebook_cut import script_to_notebook

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RECOMPILING = "compiled new graphs at every step"  # verify's stop (migrate_xla/verify/progress.py)
XM_DEFAULT = os.path.join(ROOT, ".venv", "bin", "xla-migrate")
PY_DEFAULT = os.path.join(ROOT, ".venv", "bin", "python")
# what a migrated copy of a case leaves out: data and caches, which no migration reads
NOT_COPIED = shutil.ignore_patterns("*.pt", "*.npz", "*.npy", "raw", "__pycache__")

# ---------------------------------------------------------------------------- helpers


def run_group(cmd, cwd, env, timeout):
    """Run cmd in its own process group; on timeout kill the whole group. (rc or None, output)."""
    p = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return None, out


def tree_digest(folder):
    h = {}
    for d, _, fs in os.walk(folder):
        for f in fs:
            if f.endswith((".py", ".ipynb")):
                p = os.path.join(d, f)
                with open(p, "rb") as fh:
                    h[os.path.relpath(p, folder)] = hashlib.sha256(fh.read()).hexdigest()
    return h


TRACE_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
MISSING = re.compile(r"No module named '([^']+)'")


def last_error_line(text: str) -> str:
    for line in reversed((text or "").strip().splitlines()):
        line = line.strip()
        if re.match(r"^[A-Za-z_.]*(Error|Exception|Interrupt|Exit)\b", line) or "Error:" in line:
            return line[:220]
    lines = (text or "").strip().splitlines()
    return lines[-1][:220] if lines else ""


def changed_lines(original: str, migrated: str) -> set[int]:
    """Line numbers (1-based) of the migrated file that the migration wrote or moved next to."""
    a, b = original.splitlines(), migrated.splitlines()
    out = set()
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            out.update(range(j1 + 1, max(j2, j1 + 1) + 1))
    return out


def crash_site(text: str, migrated_dir: str, original_dir: str):
    """The last traceback frame in a file of the case: (relpath, line, changed by the migration?).
    verify migrates the script's folder into a temporary copy, so a frame is matched by its path
    relative to that folder (the run folder: original_dir; its copy under migrated_dir)."""
    for path, line in reversed(TRACE_FRAME.findall(text or "")):
        if "site-packages" in path or "/lib/python" in path or "migrate_xla" in path or path.startswith("<"):
            continue
        parts = path.split(os.sep)
        rel = None
        for k in range(1, len(parts)):  # the longest tail of the path that names a file of the case
            tail = os.path.join(*parts[-k:])
            if os.path.exists(os.path.join(original_dir, tail)):
                rel = tail
            elif rel:
                break
        if rel is None:
            continue
        try:
            orig = open(os.path.join(original_dir, rel), encoding="utf-8").read()
            mig = open(os.path.join(migrated_dir, rel), encoding="utf-8").read()
        except OSError:
            return rel, int(line), None
        return rel, int(line), int(line) in changed_lines(orig, mig)
    return None, None, None


RUNTIME_HINTS = (
    "SparseXLA",
    "torch_xla",
    "XLA",
    "xla::",
    "Check failed",
    "lowering",
    "PJRT",
    "not implemented for 'XLA'",
)
DRIFT_HINTS = (
    "invalid index of a 0-dim tensor",
    "has no attribute 'Scale'",
    "volatile",
    "train_data",
    "is not subscriptable",
    "unexpected keyword argument",
    "object has no attribute",
)
CUDA_HINTS = ("CUDA", "cuda", "NVIDIA", "nccl", "cudnn")


PLAIN_EMULATION = """\
from migrate_xla.verify import cuda_refusals
from migrate_xla.verify.child import _enter_in_every_thread
from migrate_xla.verify.child.cuda_emulation import _install_cuda_shim
from migrate_xla.verify.child.emulation import EmulationMode

_install_cuda_shim(cuda_api=cuda_refusals.child_facts())
_enter_in_every_thread([EmulationMode])
"""


def plain_emulated(c, env, py, timeout=120):
    """Run the original as written with CUDA emulated the way verify's reference emulates it, and
    nothing else of verify (no float64, no step cut, no recorder): a ``sitecustomize`` installs
    the emulation in every process (the workers ``mp.spawn`` starts too). rc None: still running
    at the timeout (so it got past where verify's reference failed, most likely)."""
    with tempfile.TemporaryDirectory(prefix="rw-plain.") as site:
        with open(os.path.join(site, "sitecustomize.py"), "w") as f:
            f.write(PLAIN_EMULATION)
        boot = (
            "import runpy, sys\n"
            f"sys.argv = [{c['script']!r}] + {c['args']!r}\n"
            "sys.path.insert(0, '.')\n"
            f"runpy.run_path({c['script']!r}, run_name='__main__')\n"
        )
        path = os.pathsep.join(filter(None, (site, ROOT, env.get("PYTHONPATH"))))
        # as verify's reference: transformers and accelerate would train on torch_xla's device
        return run_group([py, "-c", boot], c["folder"], {**env, "PYTHONPATH": path, "USE_TORCH_XLA": "0"}, timeout)


def classify(c, report, log, migrated_dir, env, py, verify_rc):
    """(owner, cause) for a case whose verdict is not match."""
    if report is None:
        if verify_rc is None:
            return "environment", "verify timed out (2 shared cores): " + last_error_line(log)
        return "harness", "no report: " + last_error_line(log)
    verdict, msg = report.get("verdict"), report.get("message", "")
    sections = dict(
        re.findall(r"^--- (reference|migrated) stderr \([^)]*\) ---\n(.*?)(?=^--- |^diagnosis:|\Z)", log, re.M | re.S)
    )
    ref_err = (report.get("reference") or {}).get("error") or ""
    mig_err = (report.get("migrated") or {}).get("error") or ""
    ref_err = ref_err and ref_err + "\n" + sections.get("reference", "")
    mig_err = mig_err and mig_err + "\n" + sections.get("migrated", "")
    for d in report.get("diagnosis") or []:  # a crash verify found in a run's stderr
        if d.get("kind") == "crash" and d.get("message", "").startswith("the migrated run"):
            mig_err = d["message"] + "\n" + (mig_err or sections.get("migrated", ""))
    if verdict == "mismatch":
        rel = report.get("max_rel_diff") or 0
        owner = "runtime" if rel < 1e-2 else "rewriter"
        return owner + "?", f"mismatch: {msg[:200]}"
    if ref_err:
        err = last_error_line(ref_err) or ref_err[:200]
        m = MISSING.search(ref_err)
        if m and m.group(1).startswith("torch."):  # torch._six and the like, gone from torch 2.x
            return "script", f"imports a module torch 2.9 no longer has: {m.group(1)!r}"
        if m:
            return "environment", f"reference: No module named {m.group(1)!r}"
        if "timed out" in ref_err or "timeout" in ref_err.lower()[:80]:
            return "environment", f"reference timed out: {err}"
        both = re.findall(r"crash: the (?:reference|migrated) run crashed at \S+ \(([^)]*)", log)
        if len(both) == 2 and both[0] == both[1]:
            return "script", f"both runs crash the same way as written: {both[0][:160]}"
        rc, out = plain_emulated(c, env, py)
        if rc is None or rc == 0:
            how = "still running at 120 s" if rc is None else "exits 0"
            return "harness", f"reference failed ({err}); the original under plain CUDA emulation {how}"
        plain = last_error_line(out)
        if any(h in plain for h in CUDA_HINTS):
            return "harness", f"reference failed and the plain emulated run fails on CUDA: {plain}"
        same = plain.split(":")[0] == err.split(":")[0]
        if any(h in plain for h in DRIFT_HINTS) or same:
            return "script", f"fails as written on torch 2.9 (plain run too): {plain}"
        return "harness", f"reference: {err}; plain emulated run: {plain}"
    library = re.search(r"CUDA hard-coded in the library [^)]*\)", log)
    if mig_err and library:  # the migrated script is right, an installed library asks for a GPU
        return "environment", f"migrated run: {library.group(0)}"
    held = re.search(r"(XLA\d{3})'s fix \(held back", mig_err)
    if held:  # a crash the migration foresaw: its fix changes what is computed, so the user decides
        return "held back", f"{held.group(1)}'s fix is held back (--unsafe-fixes): {last_error_line(mig_err)[:200]}"
    if mig_err and RECOMPILING in mig_err:
        return "runtime?", f"the migrated run compiled new graphs at every step: {last_error_line(mig_err)[:200]}"
    if mig_err:
        err = last_error_line(mig_err) or mig_err[:200]
        m = MISSING.search(mig_err)
        if m:
            return "environment", f"migrated: No module named {m.group(1)!r}"
        if "timed out" in mig_err:
            return "environment", f"migrated run timed out: {err}"
        run_rel = os.path.relpath(c["folder"], c["case_dir"])
        rel, line, changed = crash_site(mig_err, os.path.normpath(os.path.join(migrated_dir, run_rel)), c["folder"])
        where = f" at {rel}:{line}" if rel else ""
        if any(h in mig_err for h in RUNTIME_HINTS) and "NotImplementedError" in mig_err or "SparseXLA" in mig_err:
            return "runtime", f"migrated run{where}: {err}"
        if changed:
            return "rewriter", f"migrated run crashes at a line the migration changed{where}: {err}"
        if any(h in mig_err for h in RUNTIME_HINTS):
            return "runtime?", f"migrated run{where} (line not changed): {err}"
        return "rewriter?", f"migrated run{where} (line not changed): {err}"
    return "harness", f"{verdict}: {msg[:200]}"


def owner(c, row, report, log, migrated_dir, env, py):
    """(owner, cause) of a row: empty for a match; what the output, fixpoint and notebook checks
    found outranks the guess from verify's report and logs."""
    if row["verdict"] == "match":
        who, cause = "", ""
    else:
        who, cause = classify(c, report, log, migrated_dir, env, py, row.get("verify_rc"))
        if row.get("unsafe", {}).get("verdict") == "match" and row["unsafe"].get("same_code"):
            cause += " [the same migrated code matched when verified again: --unsafe-fixes changes nothing here]"
        elif row.get("unsafe", {}).get("verdict") == "match":
            cause += f" [match with --unsafe-fixes, which apply {', '.join(row['unsafe']['held_back'])}]"
    if row.get("original_does_not_compile") and row["verdict"] != "match":
        who, cause = "script", f"the original does not compile: {row['original_does_not_compile']}"
    if not row["compiles"]:
        who, cause = "rewriter", f"migrated output does not compile: {row['compile_errors']}"
    elif not row["fixpoint"]:
        cause += f" [second migration changes {row.get('fixpoint_changed')}]"
        who = who or "rewriter"
    if row.get("notebook_rc") not in (0, 1) and not row.get("original_does_not_compile"):
        cause += f" [notebook --diff exit {row.get('notebook_rc')}]"
        who = who or "rewriter"
    return who, cause


# ---------------------------------------------------------------------------- one case


def verify(c, a, base, env, extra):
    """``xla-migrate verify`` of the case's original in its folder: (report or None, exit status, log).
    Kept as BASE/verify.json and verify.log (verify-unsafe.* with --unsafe-fixes, verify-native.*
    for the runs as written)."""
    tag = "verify-unsafe" if "--unsafe-fixes" in extra else "verify-native" if "native" in extra else "verify"
    rep = os.path.join(base, f"{tag}.json")
    cmd = [
        a.xm,
        "verify",
        c["script"],
        "--steps",
        str(a.steps),
        "--timeout",
        str(a.timeout),
        "--json",
        rep,
        # the whole case is the project: a script in a subfolder imports the repository's
        # other modules (locuslab/TCN's TCN/tcn.py), which verify migrates with it
        "--project",
        c["case_dir"],
        "--runtime",
        a.runtime,
        *c.get("verify", []),
        *extra,
        "--",
        *c["args"],
    ]
    rc, log = run_group(cmd, c["folder"], env, a.timeout * 3 + 120)
    with open(os.path.join(base, f"{tag}.log"), "w") as f:
        f.write(log)
    try:
        return json.load(open(rep)), rc, log
    except Exception:
        return None, rc, log


def verdict_of(report, rc) -> dict:
    """The fields of a row that a verify report gives."""
    if not report:
        return {"verdict": "timeout" if rc is None else "no report"}
    m = report.get("migrated") or {}
    return {
        "verdict": report["verdict"],
        "max_rel_diff": report.get("max_rel_diff"),
        "steps_compared": report.get("steps_compared"),
        "steps_deciding": report.get("steps_deciding"),
        "message": report.get("message", "")[:400],
        "compilations": m.get("compilations"),
        "recompilations": m.get("recompilations"),
    }


def run_case(c, a, work, env):
    name = c["name"]
    base = os.path.join(work, name)
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    row = {"case": name, "repo": c["repo"], "commit": c["commit"], "script": c["script"], "tags": c.get("tags", [])}
    runtime = ["--runtime", a.runtime]
    # 1. migrate a copy (write mode), compile, fixpoint
    mig = os.path.join(base, "migrated")
    shutil.copytree(c["case_dir"], mig, ignore=NOT_COPIED)
    r = subprocess.run([a.xm, *runtime, "--format", "json", "-q", mig], capture_output=True, text=True, env=env)
    row["migrate_rc"] = r.returncode
    files = []
    try:
        files = json.loads(r.stdout)["files"]
        row["findings"] = sum(len(f.get("diagnostics", [])) for f in files)
        codes = sorted({d.get("code", "?") for f in files for d in f.get("diagnostics", [])})
        row["codes"] = codes
    except Exception:
        row["findings"] = None
    with open(os.path.join(base, "migrate.log"), "w") as f:
        f.write(r.stdout + r.stderr)
    pys = [os.path.join(d, f) for d, _, fs in os.walk(mig) for f in fs if f.endswith(".py")]

    def compiles(p):
        return subprocess.run([a.python, "-m", "py_compile", p], capture_output=True).returncode == 0

    # a file whose original does not compile either (Python 2, broken indentation) is the script's
    bad = [p for p in pys if not compiles(p) and compiles(os.path.join(c["case_dir"], os.path.relpath(p, mig)))]
    broken = [
        os.path.relpath(p, mig) for p in pys if not compiles(os.path.join(c["case_dir"], os.path.relpath(p, mig)))
    ]
    if broken:
        row["original_does_not_compile"] = broken
    row["compiles"] = not bad
    if bad:
        row["compile_errors"] = [os.path.relpath(p, mig) for p in bad]
    before = tree_digest(mig)
    r2 = subprocess.run([a.xm, *runtime, "-q", mig], capture_output=True, text=True, env=env)
    after = tree_digest(mig)
    row["fixpoint"] = before == after and (r2.returncode != 2 or bool(broken))
    if before != after:
        row["fixpoint_changed"] = sorted(k for k in after if before.get(k) != after[k])
    # 2. notebook of the script
    nb_dir = os.path.join(base, "notebook")
    os.makedirs(nb_dir)
    try:
        src = open(os.path.join(c["folder"], c["script"]), encoding="utf-8").read()
        nb = os.path.join(nb_dir, os.path.splitext(os.path.basename(c["script"]))[0] + ".ipynb")
        with open(nb, "w") as f:
            json.dump(script_to_notebook(src), f, indent=1)
        r3 = subprocess.run([a.xm, *runtime, "--diff", nb], capture_output=True, text=True, env=env)
        row["notebook_rc"] = r3.returncode
        if r3.returncode not in (0, 1):
            row["notebook_error"] = (r3.stderr or r3.stdout).strip()[-300:]
    except SyntaxError as e:
        row["notebook_rc"] = None
        row["notebook_error"] = f"script does not parse: {e}"
    # 3. verify the original
    if a.no_verify:
        row["verdict"] = "not run"
        return row
    t0 = time.time()
    report, rc, log = verify(c, a, base, env, [])
    row["verify_s"] = round(time.time() - t0, 1)
    row["verify_rc"] = rc
    row.update(verdict_of(report, rc))
    if a.cost and report:
        # the two runs as written alone, side by side as verify runs them (bench_verify_cost.py)
        t0 = time.time()
        _, bare_rc, _ = verify(c, a, base, env, ["--precision", "native", "--no-tpu-report"])
        if bare_rc is not None:
            row["as_written_s"] = round(time.time() - t0, 1)
            row["cost_ratio"] = round(row["verify_s"] / row["as_written_s"], 2)
    # 3b. what the findings say to do next: a fix held back by default (--unsafe-fixes)
    diagnostics = [d for f in files for d in f.get("diagnostics", [])]
    held_back = sorted({d["code"] for d in diagnostics if d.get("fix") == "unsafe" and not d.get("fixed")})
    if row["verdict"] != "match" and held_back:
        unsafe_report, unsafe_rc, _ = verify(c, a, base, env, ["--unsafe-fixes"])
        row["unsafe"] = {"held_back": held_back, **verdict_of(unsafe_report, unsafe_rc)}
        # whether those fixes change the code at all: where they do not, this was the default
        # migration verified again, and a match says the first run failed, not the code
        unsafe_mig = os.path.join(base, "migrated-unsafe")
        shutil.copytree(c["case_dir"], unsafe_mig, ignore=NOT_COPIED)
        subprocess.run([a.xm, *runtime, "--unsafe-fixes", "-q", unsafe_mig], capture_output=True, env=env)
        row["unsafe"]["same_code"] = tree_digest(unsafe_mig) == tree_digest(mig)
    # 4. owner of a failure
    row["owner"], row["cause"] = owner(c, row, report, log, mig, env, a.python)
    return row


def summary(kind: str, rows: list[dict]) -> str:
    """One figure: how many of the cases verify match, and of those the script's own failures
    (it fails as written) and the machine's (a missing module, a timeout on 2 cores) left out."""
    n_match = sum(r["verdict"] == "match" for r in rows)
    n_unsafe = sum(r.get("unsafe", {}).get("verdict") == "match" for r in rows)
    counted = [r for r in rows if r.get("owner", "").rstrip("?") not in ("script", "environment")]
    line = (
        f"{kind}: verified match {n_match}/{len(rows)} as migrated by default "
        f"({n_match}/{len(counted)} of those that run as written and fit this machine), "
        f"{n_match + n_unsafe}/{len(rows)} with the unsafe fixes the findings offer where the default did not match"
    )
    ratios = [r["cost_ratio"] for r in rows if r.get("cost_ratio")]
    if ratios:
        line += (
            f"; verify's cost against the two runs as written: max {max(ratios):.2f}, median "
            f"{statistics.median(ratios):.2f} over {len(ratios)} (targets 3 and 1.5)"
        )
    return line


def fmt_rel(v):
    return "" if v is None else f"{v:.1e}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--only", default="")
    ap.add_argument("--jobs", type=int, default=1, help="cases at once (default 1: verify wants the cores)")
    ap.add_argument("--runtime", default="torch-xla", choices=["torch-xla", "torch-tpu"])
    ap.add_argument(
        "--keep", default="", help="folder for the migrated copies, logs and reports (default: a temporary one)"
    )
    ap.add_argument("--results", default="", help="results JSON (default RUNS/results.json)")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--timeout", type=int, default=600, help="verify's --timeout: seconds each run may take")
    ap.add_argument("--no-verify", action="store_true", help="migrate and check only")
    ap.add_argument(
        "--cost",
        action="store_true",
        help="also time the two runs as written (verify --precision native --no-tpu-report) for verify's cost ratio",
    )
    ap.add_argument("--table", action="store_true", help="print the table of the kept results.json; run nothing")
    ap.add_argument(
        "--reclassify", action="store_true", help="guess owners again from the kept reports and logs; run nothing else"
    )
    ap.add_argument("--xla-migrate", dest="xm", default=XM_DEFAULT)
    ap.add_argument("--python", default=PY_DEFAULT, help="interpreter for compile checks and plain runs")
    ap.add_argument("--pythonpath", default="/work/tv")
    a = ap.parse_args()
    cases = json.load(open(os.path.join(a.out, "cases.json")))
    if a.only:
        by_name = {c["name"]: c for c in cases}
        cases = [by_name[n] for n in a.only.split(",") if n in by_name]  # in the order given
    work = os.path.abspath(a.keep or tempfile.mkdtemp(prefix="rw-own."))
    os.makedirs(work, exist_ok=True)
    results_path = a.results or os.path.join(work, "results.json")
    rows = []
    old = {}
    if os.path.exists(results_path):  # keep rows of cases not run this time
        try:
            old = {r["case"]: r for r in json.load(open(results_path))["rows"]}
        except Exception:
            old = {}

    def env_for(c):
        env = {**os.environ, "PJRT_DEVICE": "CPU"}
        extra = [p for p in (a.pythonpath,) if p and os.path.isdir(p)]
        if env.get("PYTHONPATH"):
            extra.append(env["PYTHONPATH"])
        if extra:
            env["PYTHONPATH"] = os.pathsep.join(extra)
        for k, v in c.get("env", {}).items():
            v = v.replace("{case}", c["case_dir"])
            # a case's PYTHONPATH (its repository installed with pip install -e) joins the packages'
            env[k] = os.pathsep.join([v, env["PYTHONPATH"]]) if k == "PYTHONPATH" and env.get(k) else v
        return env

    def one(c):
        row = run_case(c, a, work, env_for(c))
        print(
            f"{row['case']}: {row['verdict']} {fmt_rel(row.get('max_rel_diff'))} {row.get('owner', '')} {row.get('cause', '')}",
            file=sys.stderr,
            flush=True,
        )
        return row

    if a.table:
        rows = [old[c["name"]] for c in cases if c["name"] in old]
    elif a.reclassify:
        for c in cases:
            row = old.get(c["name"])
            base = os.path.join(work, c["name"])
            if not row or row.get("verdict") in ("match", "not run"):
                continue
            try:
                report = json.load(open(os.path.join(base, "verify.json")))
            except Exception:
                report = None
            log = (
                open(os.path.join(base, "verify.log")).read()
                if os.path.exists(os.path.join(base, "verify.log"))
                else ""
            )
            row["owner"], row["cause"] = owner(
                c, row, report, log, os.path.join(base, "migrated"), env_for(c), a.python
            )
            rows.append(row)
    elif a.jobs > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(a.jobs) as ex:
            rows = list(ex.map(one, cases))
    else:
        for c in cases:
            rows.append(one(c))
            old[c["name"]] = rows[-1]
            with open(results_path, "w") as f:
                json.dump({"runtime": a.runtime, "steps": a.steps, "rows": list(old.values())}, f, indent=1)
    for r in rows:
        old[r["case"]] = r
    with open(results_path if not a.table else os.devnull, "w") as f:
        json.dump({"runtime": a.runtime, "steps": a.steps, "rows": list(old.values())}, f, indent=1)
    print(
        "| case | repository @ commit | script | migrated (rc, findings, compiles, fixpoint, notebook) | verdict | max rel diff | owner | cause |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        verdict = r["verdict"]
        if r.get("unsafe"):
            u = r["unsafe"]
            verdict += (
                f"; {u['verdict']} {fmt_rel(u.get('max_rel_diff'))} with --unsafe-fixes ({', '.join(u['held_back'])})"
            )
        m = f"{r['migrate_rc']}, {r.get('findings')}, {'yes' if r['compiles'] else 'NO'}, {'yes' if r['fixpoint'] else 'NO'}, {r.get('notebook_rc')}"
        cause = (r.get("cause") or "").replace("|", "\\|")
        print(
            f"| {r['case']} | {r['repo']} @ {r['commit'][:7]} | {r['script']} | {m} | {verdict} | {fmt_rel(r.get('max_rel_diff'))} | {r.get('owner', '')} | {cause} |"
        )
    print()
    for kind, group in (
        ("tutorials", [r for r in rows if "project" not in r.get("tags", [])]),
        ("projects", [r for r in rows if "project" in r.get("tags", [])]),
    ):
        if group:
            print(summary(kind, group))
    print(f"results in {results_path}")
    if not a.keep:
        print(f"(work folder {work} kept for this run's logs)")


if __name__ == "__main__":
    main()
