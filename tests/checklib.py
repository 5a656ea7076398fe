"""checklib.py — what the Python test drivers share.

expect(cond, what, proc=None): prints "ok   what" or "FAIL what" (with the process's exit status and the
tails of its output when one is given), counts the failure in checklib.failures, returns cond.
run(cmd, timeout=300, **kw): subprocess.run with stdout and stderr captured as text.
A driver ends with `return 1 if checklib.failures else 0`.
"""
import subprocess

failures = 0


def expect(cond, what, proc=None, tail=3000):
    """Records one expectation; returns cond so that a driver can go on only when it held."""
    global failures
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures += 1
        if proc is not None:
            print(f"     exit {proc.returncode}\n     stdout: {proc.stdout[-tail:]}\n     stderr: {proc.stderr[-tail:]}")
    return cond


def run(cmd, timeout=300, **kw):
    """Runs cmd to completion (at most timeout seconds), its output captured as text."""
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout, **kw)
