#!/usr/bin/env python3
"""Every public call's contract in shiro.h says, under the fixed labels the
header's opening comment names, whether it is collective, what it allocates,
and what a failure leaves ("On failure:", or "Cannot fail" for calls that
cannot); and the header says what MPI each needs (thread level, MPI_Init) and
that one plan may serve several contexts.

usage: contracts_check.py SHIRO_H
"""
import re
import sys


def main():
    text = open(sys.argv[1]).read()
    bad = []
    calls = re.findall(r"((?:/\*(?:[^*]|\*(?!/))*\*/\s*)+)SHIRO_API[^;(]*?\b(shiro_\w+)\(", text)
    for comment, name in calls:
        last = comment[comment.rfind("/*"):]  # the comment right above the declaration
        missing = [lab for lab in ("Collective:", "Allocates:") if lab not in last]
        if "On failure:" not in last and "Cannot fail" not in last:
            missing.append("On failure: (or Cannot fail)")
        if missing:
            bad.append(f"{name}: no {', '.join(missing)}")
    head = text[:text.find("#ifndef SHIRO_H")]
    for needle in ("MPI_THREAD_FUNNELED", "MPI_THREAD_MULTIPLE", "before MPI_Init", "several contexts"):
        if needle not in head:
            bad.append(f"the header's opening comment does not say {needle!r}")
    print(f"{len(calls)} public calls")
    for b in bad:
        print("FAIL", b)
    if len(calls) < 15:
        print("FAIL fewer than 15 public calls found: the pattern no longer matches shiro.h")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
