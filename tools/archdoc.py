#!/usr/bin/python3
"""archdoc: common/ARCHITECTURE.md names every source file, and every file
it names exists (`make lint` runs it).

A source file is a .c file, or a .h file without a .c of the same stem
beside it, under common/, daemon/ and each folder of tools/. The document
names it by its file name (`tgt_file.c`) or by a path ending in it. A
name in the document is any word ending in .c or .h; one with a folder
(`common/base/cmd.h`, or `base/hist.h` as an include names it) must exist
at that path of the tree or of common/, one without a
folder must be the name of a file in common/, daemon/ or tools/*/.

Exit 0 when both hold, 1 naming each file missing from the document and
each name in it that is no file. Python 3 standard library only.
"""

import argparse
import os
import re
import sys

DOC = os.path.join("common", "ARCHITECTURE.md")
NAME = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+\.[ch])(?![\w/])")


def tree_files(root):
    """Every .c and .h file under common/, daemon/ and tools/*/, relative."""
    out = []
    tops = [os.path.join(root, "common"), os.path.join(root, "daemon")]
    tools = os.path.join(root, "tools")
    if os.path.isdir(tools):
        tops += [os.path.join(tools, d) for d in sorted(os.listdir(tools))
                 if os.path.isdir(os.path.join(tools, d))]
    for top in tops:
        for dirpath, _, files in os.walk(top):
            for f in files:
                if f.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(dirpath, f), root))
    return sorted(out)


def sources(files):
    """The files the document must name: each .c, and each .h with no .c."""
    have = set(files)
    return [f for f in files
            if f.endswith(".c") or f[:-2] + ".c" not in have]


def findings(root):
    with open(os.path.join(root, DOC), encoding="utf-8") as f:
        text = f.read()
    files = tree_files(root)
    basenames = {os.path.basename(f) for f in files}
    named = set(NAME.findall(text))
    named_base = {os.path.basename(n) for n in named}
    out = []
    for f in sources(files):
        if os.path.basename(f) not in named_base:
            out.append(f"{f} is not named in {DOC}: add a line saying what it owns")
    for n in sorted(named):
        if "/" in n:
            exists = any(os.path.exists(os.path.join(root, top, n)) for top in ("", "common"))
        else:
            exists = n in basenames
        if not exists:
            out.append(f"{DOC} names {n}, which is no file of the tree: correct or drop it")
    return out, len(sources(files))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."),
                    help="the tree to check (default: this checkout)")
    args = ap.parse_args()
    found, n = findings(args.root)
    for line in found:
        print("archdoc: " + line, file=sys.stderr)
    if found:
        return 1
    print(f"archdoc: {DOC} names all {n} source files, and each name in it exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
