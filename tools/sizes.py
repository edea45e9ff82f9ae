#!/usr/bin/python3
"""sizes: no function over 60 lines and no file over 900 lines in common/
and daemon/ (the house rule for a module a maintainer can read whole;
`make lint` runs it).

A function is counted from the first line of its signature to its closing
brace, both included. The tree is formatted by clang-format in the Linux
brace style (.clang-format), which puts a function's opening brace alone
at column 0 and its closing brace alone at column 0, and nothing else
there; the signature is the run of lines before the opening brace that
starts at the last line beginning in column 0.

Exit 0 when clean, 1 naming each function and file over its limit.
Python 3 standard library only.
"""

import argparse
import os
import sys

MAX_FUNCTION = 60
MAX_FILE = 900
DIRS = ["common", "daemon"]


def functions(lines):
    """(name, first line, last line) of each function body in lines,
    1-based, the signature's first line included."""
    out = []
    i = 0
    while i < len(lines):
        if lines[i].rstrip("\n") != "{":
            i += 1
            continue
        start = i - 1
        while start > 0 and lines[start][:1] in ("\t", " "):
            start -= 1
        end = i + 1
        while end < len(lines) and lines[end].rstrip("\n") != "}":
            end += 1
        sig = " ".join(line.strip() for line in lines[start:i])
        name = sig.split("(")[0].split()[-1].lstrip("*") if "(" in sig else sig
        out.append((name, start + 1, end + 1))
        i = end + 1
    return out


def sources(root):
    """Every .c and .h file under DIRS, relative to root, sorted."""
    out = []
    for d in DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in files:
                if f.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(dirpath, f), root))
    return sorted(out)


def findings(root):
    """The lines that name each file and function over its limit."""
    out = []
    for rel in sources(root):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            lines = f.readlines()
        if len(lines) > MAX_FILE:
            out.append(f"{rel}: {len(lines)} lines (at most {MAX_FILE}): split the module")
        for name, first, last in functions(lines):
            n = last - first + 1
            if n > MAX_FUNCTION:
                out.append(f"{rel}:{first}: {name}() is {n} lines (at most {MAX_FUNCTION}):"
                           " split it into helpers named for what they do")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."),
                    help="the tree to check (default: this checkout)")
    args = ap.parse_args()
    found = findings(args.root)
    for line in found:
        print("sizes: " + line, file=sys.stderr)
    if found:
        return 1
    print(f"sizes: no function over {MAX_FUNCTION} lines, no file over {MAX_FILE}"
          " in common/ and daemon/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
