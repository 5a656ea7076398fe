#!/usr/bin/env python3
"""man_check.py BUILD_DIR SOURCE_DIR — every installed tool has a man page in
docs/man/, and each page names every option the tool's --help prints, so the
pages cannot drift from the tools.

The installed tools are the executables that tools/**/meson.build marks
`install: true`; each must have docs/man/NAME.1 (hand-written troff, installed
by docs/meson.build). Exit 1 with a list of what is missing."""
import os
import re
import subprocess
import sys

EXE = re.compile(r"(\w+)\s*=\s*executable\(\s*'([^']+)'(.*?)\n\S", re.S)
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def installed_tools(src):
    """(name, path in the build) of every executable under tools/ installed by meson."""
    tools = []
    for d, _, files in os.walk(os.path.join(src, "tools")):
        if "meson.build" not in files:
            continue
        text = open(os.path.join(d, "meson.build")).read() + "\nx"
        for _, name, rest in EXE.findall(text):
            if re.search(r"install\s*:\s*true", rest):
                tools.append((name, os.path.relpath(d, src)))
    return tools


def man_text(path):
    """The page's words: troff's font changes dropped, \\- read as -."""
    t = open(path, encoding="utf-8").read()
    t = re.sub(r"\\f[BIRP]|\\f\(..|\\&", "", t)
    return t.replace("\\-", "-")


def main():
    build, src = (os.path.abspath(a) for a in sys.argv[1:3])
    problems, checked = [], 0
    tools = installed_tools(src)
    if not tools:
        problems.append("no installed tool found in tools/**/meson.build")
    for name, sub in tools:
        page = os.path.join(src, "docs", "man", name + ".1")
        if not os.path.exists(page):
            problems.append(f"{name}: no man page docs/man/{name}.1")
            continue
        exe = os.path.join(build, sub, name)
        p = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            problems.append(f"{name} --help: exit {p.returncode}: {p.stderr.strip()[:200]}")
            continue
        text = man_text(page)
        if not re.search(r"^\.TH\s+" + re.escape(name.upper()) + r"\s+1\b", text, re.M):
            problems.append(f"docs/man/{name}.1: no '.TH {name.upper()} 1' header")
        options = sorted(set(OPTION.findall(p.stdout)))
        for opt in options:
            checked += 1
            if not re.search(r"(?<![\w-])" + re.escape(opt) + r"(?![\w-])", text):
                problems.append(f"docs/man/{name}.1 does not name {opt}, which {name} --help prints")
    if problems:
        print("\n".join(problems))
        print(f"FAIL: {len(problems)} problems")
        return 1
    print(f"ok: {len(tools)} installed tools ({', '.join(n for n, _ in tools)}), "
          f"{checked} options of their --help, each named in its man page")
    return 0


if __name__ == "__main__":
    sys.exit(main())
