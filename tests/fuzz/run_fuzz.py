#!/usr/bin/env python3
"""Runs the libFuzzer harnesses of a fuzz build and triages what they find.

usage: run_fuzz.py BUILD [--harness NAME[,NAME]] [--runs N] [--time S] [--fork J] [--strict] [--known]
                         [--triage-only]

BUILD is a build directory configured with -Dfuzz=true (see smoke.sh). For
each harness: every committed seed and regression input is run once, then
libFuzzer fuzzes from the seeds (work corpus BUILD/fuzz/corpus-NAME, kept
between runs) for N executions or S seconds, whichever comes first (0: no
limit), in fork mode (-fork=J, -ignore_crashes) so that one crash does not
end the campaign. Every artifact it writes (BUILD/fuzz/artifacts/NAME/) is
run again and classified:
  ours     the sanitizer report or FUZZ_ASSERT points into our code (or HDF5
           wrote into memory our code owns): a bug to fix
  hdf5     the fault is inside libhdf5 on a damaged file, touching only its
           own memory: a known HDF5 1.10 weakness, reported upstream-style in
           tests/fuzz/README.md, not a failure of this run
  flaky    does not reproduce when run alone (timeouts, memory limits)
Exit status 0 when nothing is classified 'ours', 1 otherwise, 2 on misuse.
"""
import argparse
import glob
import gzip
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Per harness: extra seed directories (besides the build-time ones) and libFuzzer flags.
HARNESSES = {
    "fuzz_mm_read": {"flags": ["-max_len=8192", "-malloc_limit_mb=1000000"]},
    "fuzz_plan_file": {"flags": ["-max_len=65536"]},
    "fuzz_plan_prog": {"flags": ["-max_len=16384"]},
}

FRAME = re.compile(r"^\s*#(\d+) 0x[0-9a-f]+ (?:in (\S+) )?(.*)$")
RUNTIME_PREFIXES = ("__interceptor_", "__asan", "__sanitizer", "__ubsan", "__lsan", "__memcpy", "__memmove",
                    "__memset", "__memcmp", "__strlen", "__GI_", "fuzzer::", "malloc", "calloc", "realloc", "free",
                    "operator", "memcpy", "memmove", "memset", "__libc_", "_start", "main")


def sanitizer_env(strict, known=False):
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = "allocator_may_return_null=1:detect_leaks=1:handle_abort=1"
    env["LSAN_OPTIONS"] = f"suppressions={os.path.join(HERE, 'lsan.supp')}:print_suppressions=0"
    env["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1"
    env["OMP_NUM_THREADS"] = "1"
    if strict:
        env["SHIRO_FUZZ_STRICT"] = "1"
    if known:  # reported findings awaiting a fix elsewhere: let a long campaign get past them
        env["UBSAN_OPTIONS"] += f":suppressions={os.path.join(HERE, 'known-ubsan.supp')}"
    return env


def prepare_seeds(build, name):
    """Seed directories for a harness: build-time outputs copied apart, plus the committed ones."""
    root = os.path.join(build, "fuzz")
    made = os.path.join(build, "tests", "fuzz")
    dirs = []
    if name == "fuzz_mm_read":
        dirs.append(os.path.join(HERE, "seeds", "mm"))
        gz = os.path.join(root, "seeds-mm-gz")
        os.makedirs(gz, exist_ok=True)
        for src in ["karate.mtx", "skew-crlf.mtx", "herm-noeol.mtx", "overcount.mtx"]:
            data = open(os.path.join(HERE, "seeds", "mm", src), "rb").read()
            z = gzip.compress(data, mtime=0)
            open(os.path.join(gz, src + ".gz"), "wb").write(z)
            open(os.path.join(gz, src + ".truncated.gz"), "wb").write(z[: len(z) // 2])
        open(os.path.join(gz, "two-members.gz"), "wb").write(
            gzip.compress(b"%%MatrixMarket matrix coordinate pattern general\n2 2 2\n", mtime=0) +
            gzip.compress(b"1 1\n2 2\n", mtime=0))
        dirs.append(gz)
    else:
        pattern, sub, committed = (("*.shiro.h5", "seeds-plan", "plan") if name == "fuzz_plan_file"
                                   else ("*.prog", "seeds-prog", "prog"))
        d = os.path.join(root, sub)
        os.makedirs(d, exist_ok=True)
        found = glob.glob(os.path.join(made, pattern))
        if not found:
            sys.exit(f"run_fuzz: no {pattern} seeds in {made} (build with ninja -C {build} first)")
        for f in found:
            shutil.copy(f, d)
        dirs.append(d)
        dirs.append(os.path.join(HERE, "seeds", committed))
    return [d for d in dirs if os.path.isdir(d)]


def first_own_frame(lines):
    """First frame of a stack that is neither sanitizer/libFuzzer runtime nor libc: (function, where)."""
    for ln in lines:
        m = FRAME.match(ln)
        if not m:
            continue
        fn, where = m.group(2) or "", m.group(3)
        if fn.startswith(RUNTIME_PREFIXES) or "libc.so" in where or "/libFuzzer" in where:
            continue
        return fn, where
    return None


def in_hdf5(frame):
    return frame is not None and ("libhdf5" in frame[1] or frame[0].startswith("H5"))


def classify(out):
    """'ours' or 'hdf5' for a sanitizer / libFuzzer report; None if there is none."""
    if "FUZZ_ASSERT" in out or "runtime error:" in out:
        return "ours"
    if not re.search(r"ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer|UndefinedBehaviorSanitizer)", out):
        return None
    # Split the report into stacks (a stack is a run of consecutive frame lines).
    stacks, cur, heads, head = [], [], [], ""
    for ln in out.splitlines():
        if FRAME.match(ln):
            cur.append(ln)
        else:
            if cur:
                stacks.append(cur)
                heads.append(head)
                cur = []
            head = ln
    if cur:
        stacks.append(cur)
        heads.append(head)
    if not stacks:
        return "ours"  # e.g. rss limit: nothing to blame on HDF5
    main = first_own_frame(stacks[0])
    if not in_hdf5(main):
        return "ours"
    # HDF5 at the top: still ours if the memory it touched is ours (a heap
    # block our code allocated or freed, or a local variable of our frame).
    for head, st in zip(heads[1:], stacks[1:]):
        if "allocated by" in head or "freed by" in head or "located in stack" in head:
            f = first_own_frame(st)
            if f is not None and not in_hdf5(f):
                return "ours"
    return "hdf5"


def reproduce(exe, artifact, env, flags=()):
    """Runs one input again; a single allocation over the memory limit then shows its stack."""
    flags = [f for f in flags if not f.startswith("-max_len")] + ["-rss_limit_mb=4096"]
    try:
        p = subprocess.run([exe] + flags + [artifact], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace", timeout=120, env=env)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired:
        return -1, "timeout (no report)"


def executions(log):
    """Executions libFuzzer reports: final stats (in-process), or the last '#N:' line of
    fork mode, whose parent prints 0 as its own final stats."""
    counts = [int(x) for x in re.findall(r"stat::number_of_executed_units: (\d+)", log)]
    counts += [int(x) for x in re.findall(r"^#(\d+)[: \t]", log, re.M)]
    return max(counts, default=0)


def run_one(build, name, a, env):
    exe = os.path.join(build, "tests", "fuzz", name)
    if not os.access(exe, os.X_OK):
        sys.exit(f"run_fuzz: {exe} not built (configure with -Dfuzz=true, CC=clang)")
    seeds = prepare_seeds(build, name)
    corpus = os.path.join(build, "fuzz", "corpus-" + name)
    arts = os.path.join(build, "fuzz", "artifacts", name)
    os.makedirs(corpus, exist_ok=True)
    os.makedirs(arts, exist_ok=True)
    before = set(os.listdir(arts))
    result = {"ours": [], "hdf5": [], "flaky": []}

    if a.triage_only:
        before = set()
    # 1. Every committed input once (regressions of fixed bugs live there).
    committed = sorted(f for d in seeds if d.startswith(HERE) for f in glob.glob(os.path.join(d, "*")))
    if committed and not a.triage_only:
        p = subprocess.run([exe] + committed, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace", env=env, timeout=600)
        if p.returncode != 0:
            kind = classify(p.stdout) or "ours"
            print(f"{name}: a committed seed fails ({kind}):\n{p.stdout[-3000:]}")
            result[kind].append("committed seeds")

    # 2. The campaign.
    flags = HARNESSES[name]["flags"] + [f"-artifact_prefix={arts}/", "-timeout=30", "-rss_limit_mb=3072",
                                        "-print_final_stats=1"]
    if a.seed > 0:
        flags.append(f"-seed={a.seed}")  # CI: the same mutations every run, no flaky smoke test
    if a.runs > 0:
        flags.append(f"-runs={a.runs}")
    if a.time > 0:
        flags.append(f"-max_total_time={a.time}")
    if a.fork > 0:
        flags += [f"-fork={a.fork}", "-ignore_crashes=1", "-ignore_timeouts=1", "-ignore_ooms=1"]
    log_path = os.path.join(build, "fuzz", name + ".log")
    if not a.triage_only:
        with open(log_path, "w") as log:
            subprocess.run([exe] + flags + [corpus] + seeds, stdout=log, stderr=subprocess.STDOUT, env=env)
    text = open(log_path, errors="replace").read() if os.path.exists(log_path) else ""
    execs = executions(text)

    # 3. Triage what it found.
    for f in sorted(set(os.listdir(arts)) - before):
        path = os.path.join(arts, f)
        if not os.path.isfile(path):
            continue
        rc, out = reproduce(exe, path, env, HARNESSES[name]["flags"])
        kind = classify(out) if rc != 0 else None
        kind = kind or "flaky"
        result[kind].append(path)
        if kind != "flaky":
            dest = os.path.join(arts, kind)
            os.makedirs(dest, exist_ok=True)
            shutil.move(path, os.path.join(dest, f))
            open(os.path.join(dest, f + ".txt"), "w").write(out)
            result[kind][-1] = os.path.join(dest, f)
    corpus_n = len(os.listdir(corpus))
    print(f"{name}: {execs} executions, corpus {corpus_n} inputs; "
          f"ours {len(result['ours'])}, hdf5 {len(result['hdf5'])}, flaky {len(result['flaky'])} (log {log_path})")
    for f in result["ours"]:
        print(f"  OURS  {f}")
    return execs, result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--harness", default=",".join(HARNESSES))
    ap.add_argument("--runs", type=int, default=50000, help="executions per harness (0: no limit)")
    ap.add_argument("--time", type=int, default=20, help="seconds per harness (0: no limit)")
    ap.add_argument("--seed", type=int, default=1, help="libFuzzer -seed (0: a random seed each run)")
    ap.add_argument("--fork", type=int, default=1, help="libFuzzer -fork jobs (0: in-process, stops at the first crash)")
    ap.add_argument("--strict", action="store_true", help="also assert protocol rules (SHIRO_FUZZ_STRICT=1)")
    ap.add_argument("--triage-only", action="store_true",
                    help="no fuzzing: classify the artifacts left in BUILD/fuzz/artifacts/NAME/")
    ap.add_argument("--known", action="store_true",
                    help="skip findings already reported (known-ubsan.supp): long campaigns only")
    a = ap.parse_args()
    if a.runs <= 0 and a.time <= 0 and not a.triage_only:
        print("run_fuzz: give --runs or --time (or both)")
        return 2
    build = os.path.abspath(a.build)
    env = sanitizer_env(a.strict, a.known)
    ours = 0
    for name in a.harness.split(","):
        if name not in HARNESSES:
            print(f"run_fuzz: unknown harness '{name}' (have {', '.join(HARNESSES)})")
            return 2
        _, result = run_one(build, name, a, env)
        ours += len(result["ours"])
    return 1 if ours else 0


if __name__ == "__main__":
    sys.exit(main())
