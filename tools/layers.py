#!/usr/bin/python3
"""layers: check who calls whom, from the built objects (common/ARCHITECTURE.md).

Reads `nm` of every object of common/, daemon/ and tools/ (the object of
each source file in the tree, so objects left by moved sources are not
read), links each undefined symbol to the object defining it, and fails
(exit 1) on:
  - a cycle between files (a calls b, b calls a, directly or round a loop),
  - a call that the layer table below does not allow (a lower layer calling
    a higher one, daemon/ and tools/wearmon calling each other), or an
    #include of a header of such a layer,
  - build/wearmon holding a symbol of common/device, common/io or the config
    parser, or `ldd build/wearmon` showing libblkid, libinih, libaio or liburing.
A call named in the allow-list (tools/layers.allow) is left out of both
checks; a line there that matches no call fails too, so the list shrinks.
Exit 0 when clean, 1 on findings, 2 on a usage or build problem.
Python 3 standard library only.
"""

import argparse
import os
import re
import subprocess
import sys

# The layers, bottom to top: name, the files (path prefixes, longest
# match wins), the layers it may call. common/ARCHITECTURE.md says why.
LAYERS = [
    ("base", ["common/base/"], []),
    ("io", ["common/io/"], ["base"]),
    # The enums shared by every layer and their text, and the campaign-key
    # comparison: plain code that calls no other module.
    ("config.plain", ["common/config/names.", "common/config/cfg_diff."], ["base"]),
    ("config", ["common/config/"], ["base", "io", "config.plain"]),
    ("db", ["common/db/"], ["base", "config.plain"]),
    ("db.query", ["common/db/query/"], ["base", "config.plain", "db"]),
    ("device", ["common/device/"], ["base", "config.plain", "config", "db", "db.query"]),
    ("daemon", ["daemon/"],
     ["base", "io", "config.plain", "config", "db", "db.query", "device"]),
    ("wearmon", ["tools/wearmon/"], ["base", "config.plain", "db", "db.query"]),
    ("simssd", ["tools/simssd/"], []),
]

# Source trees whose objects are read; sources matching SKIP are not
# library or program code (simssd's unit test).
SOURCE_DIRS = ["common", "daemon", "tools/wearmon", "tools/simssd"]
SKIP = ["tools/simssd/test_"]

# What the read-only CLI must not contain, and the libraries it must not load.
CLI = "wearmon"
CLI_FORBIDDEN = ["device", "io", "config"]
CLI_FORBIDDEN_LIBS = ["libblkid", "libinih", "libaio", "liburing"]


def layer_of(path):
    """The layer name of a source path, or None."""
    best, best_len = None, -1
    for name, prefixes, _ in LAYERS:
        for p in prefixes:
            if path.startswith(p) and len(p) > best_len:
                best, best_len = name, len(p)
    return best


def sources(root):
    """Every .c file under SOURCE_DIRS, relative to root, sorted."""
    out = []
    for d in SOURCE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in files:
                rel = os.path.relpath(os.path.join(dirpath, f), root)
                if f.endswith(".c") and not any(rel.startswith(s) for s in SKIP):
                    out.append(rel)
    return sorted(out)


def parse_nm(text, defined, undefined, key=lambda f: None):
    """Add the global symbols of `nm -P` output to defined/undefined, by
    key(first field) when nm named the file (-A), else under None."""
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0].endswith(":"):
            who, f = key(f[0][:-1]), f[1:]
        else:
            who = key(None)
        if len(f) < 2 or f[0].endswith(":"):
            continue
        name, kind = f[0], f[1]
        if kind == "U":
            undefined.setdefault(who, set()).add(name)
        elif kind.isupper() or kind in "vw":
            defined.setdefault(who, set()).add(name)


def nm_symbols(path):
    """(defined, undefined) global symbol sets of an object or program."""
    res = subprocess.run(["nm", "-P", path], capture_output=True, text=True)
    if res.returncode != 0:
        raise OSError("nm %s: %s" % (path, res.stderr.strip()))
    defined, undefined = {}, {}
    parse_nm(res.stdout, defined, undefined)
    return defined.get(None, set()), undefined.get(None, set())


def nm_objects(objs):
    """{source: (defined, undefined)} of every object, in one nm run."""
    by_obj = {obj: src for src, obj in objs.items()}
    res = subprocess.run(["nm", "-P", "-A", *objs.values()], capture_output=True, text=True)
    if res.returncode != 0:
        raise OSError("nm: %s" % res.stderr.strip())
    defined, undefined = {}, {}
    parse_nm(res.stdout, defined, undefined, key=by_obj.get)
    return {src: (defined.get(src, set()), undefined.get(src, set())) for src in objs}


def call_graph(objs):
    """{caller: {callee: set(symbols)}} over sources (objs: source -> object)."""
    syms = nm_objects(objs)
    owner = {}
    for src in sorted(objs):
        for s in syms[src][0]:
            owner.setdefault(s, src)
    graph = {src: {} for src in objs}
    for src in objs:
        for s in syms[src][1]:
            dst = owner.get(s)
            if dst and dst != src:
                graph[src].setdefault(dst, set()).add(s)
    return graph, syms


# An allow-list line: the call, a colon and the reason in words. The
# reason says what the call is and why it is still there; an issue number
# means nothing to a reader of the tree, so a reason that cites one fails.
ALLOW_LINE = re.compile(r"^(\S+\.c)\s+->\s+(\S+\.c):\s+(\S.*)$")
ISSUE_NUMBER = re.compile(r"\bissue\s*#?\d+|#\d+\b", re.IGNORECASE)


def read_allow(path):
    """The allowed calls {(caller, callee): line number}. Each line is
    "CALLER.c -> CALLEE.c: why"; # starts a comment line."""
    allow, errors = {}, []
    if not path or not os.path.exists(path):
        return allow, errors
    with open(path) as fh:
        for n, line in enumerate(fh, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            m = ALLOW_LINE.match(text)
            if not m or len(m.group(3).split()) < 2:
                errors.append("%s:%d: expected \"CALLER.c -> CALLEE.c: why, in words\"" % (path, n))
                continue
            if ISSUE_NUMBER.search(m.group(3)):
                errors.append("%s:%d: the reason cites an issue number; say what the call is"
                              " and why it stays instead" % (path, n))
                continue
            allow[(m.group(1), m.group(2))] = n
    return allow, errors


def cycles(graph):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        # Iterative, so a long chain does not reach Python's recursion limit.
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def fmt_syms(syms, limit=6):
    s = sorted(syms)
    return ", ".join(s[:limit]) + (", ..." if len(s) > limit else "")


def check_cycles(graph):
    findings = []
    for comp in cycles(graph):
        members = set(comp)
        lines = ["call cycle between %s:" % ", ".join(comp)]
        for a in comp:
            for b in sorted(graph[a]):
                if b in members:
                    lines.append("    %s -> %s (%s)" % (a, b, fmt_syms(graph[a][b])))
        findings.append("\n".join(lines))
    return findings


def check_rule(graph):
    allowed = {name: set(may) for name, _, may in LAYERS}
    findings = []
    for a in sorted(graph):
        la = layer_of(a)
        for b in sorted(graph[a]):
            lb = layer_of(b)
            if la is None or lb is None or la == lb or lb in allowed[la]:
                continue
            findings.append("layer rule: %s (%s) may not call %s (%s): %s" %
                            (a, la, b, lb, fmt_syms(graph[a][b])))
    return findings


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def check_includes(root):
    """#include "x.h" of a layer the including file may not call."""
    allowed = {name: set(may) for name, _, may in LAYERS}
    findings = []
    files = sources(root)
    for d in SOURCE_DIRS:
        for dirpath, _, names in os.walk(os.path.join(root, d)):
            files += [os.path.relpath(os.path.join(dirpath, n), root)
                      for n in names if n.endswith(".h")]
    for f in sorted(set(files)):
        la = layer_of(f)
        with open(os.path.join(root, f), errors="replace") as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            # -Icommon first, then the including file's own folder.
            cands = [os.path.join("common", inc), os.path.join(os.path.dirname(f), inc)]
            hdr = next((c for c in cands if os.path.exists(os.path.join(root, c))), None)
            lb = layer_of(os.path.normpath(hdr)) if hdr else None
            if la and lb and la != lb and lb not in allowed[la]:
                findings.append("layer rule: %s (%s) may not include %s (%s)" %
                                (f, la, os.path.normpath(hdr), lb))
    return findings


def check_cli(build, syms):
    """build/wearmon: no symbol of a forbidden layer, no forbidden library."""
    prog = os.path.join(build, "wearmon")
    if not os.path.exists(prog):
        return ["%s: not built (run make)" % prog]
    defined, _ = nm_symbols(prog)
    findings = []
    for src in sorted(syms):
        layer = layer_of(src)
        if layer not in CLI_FORBIDDEN:
            continue
        bad = defined & syms[src][0]
        if bad:
            findings.append("%s links %s (%s layer): %s" % (prog, src, layer, fmt_syms(bad)))
    res = subprocess.run(["ldd", prog], capture_output=True, text=True)
    for line in res.stdout.splitlines():
        lib = line.strip().split(" ")[0]
        if any(lib.startswith(l + ".") or lib == l for l in CLI_FORBIDDEN_LIBS):
            findings.append("%s loads %s (ldd)" % (prog, lib))
    return findings


def main(argv):
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=here, help="source tree (default: this one)")
    ap.add_argument("--build", help="build directory (default: ROOT/build)")
    ap.add_argument("--allow", help="allow-list (default: ROOT/tools/layers.allow; '' for none)")
    ap.add_argument("--no-cli", action="store_true",
                    help="skip the check of build/wearmon (fabricated trees)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every call between files")
    args = ap.parse_args(argv)
    root = os.path.abspath(args.root)
    build = args.build or os.path.join(root, "build")
    allow_path = args.allow if args.allow is not None else os.path.join(root, "tools/layers.allow")

    objs, missing = {}, []
    for src in sources(root):
        obj = os.path.join(build, src[:-2] + ".o")
        if os.path.exists(obj):
            objs[src] = obj
        else:
            missing.append(obj)
    if missing:
        print("layers: not built (run make): %s" % ", ".join(missing), file=sys.stderr)
        return 2
    try:
        graph, syms = call_graph(objs)
    except OSError as e:
        print("layers: %s" % e, file=sys.stderr)
        return 2
    if args.verbose:
        for a in sorted(graph):
            for b in sorted(graph[a]):
                print("%s -> %s (%s)" % (a, b, fmt_syms(graph[a][b], 100)))

    allow, findings = read_allow(allow_path)
    findings += ["%s belongs to no layer: add its folder to LAYERS (tools/layers.py) and to "
                 "common/ARCHITECTURE.md" % src for src in sorted(objs) if layer_of(src) is None]
    for (a, b), n in sorted(allow.items(), key=lambda kv: kv[1]):
        if b in graph.get(a, {}):
            del graph[a][b]
        else:
            findings.append("%s:%d: %s calls nothing of %s any more: delete the line" %
                            (allow_path, n, a, b))
    findings += check_cycles(graph) + check_rule(graph) + check_includes(root)
    if not args.no_cli:
        try:
            findings += check_cli(build, syms)
        except OSError as e:
            findings.append(str(e))
    for f in findings:
        print("layers: %s" % f, file=sys.stderr)
    if findings:
        print("layers: %d finding(s); the rule is common/ARCHITECTURE.md" % len(findings),
              file=sys.stderr)
        return 1
    print("layers: %d files, %d calls between files: no cycle, none against the rule" %
          (len(graph), sum(len(v) for v in graph.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
