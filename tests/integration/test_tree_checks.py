"""tools/sizes.py (no function over 60 lines, no file over 900 in common/
and daemon/) and tools/archdoc.py (common/ARCHITECTURE.md names every
source file, and each name in it is a file): the tree keeps to both, and a
fabricated tree that breaks them is caught, each finding named."""

import subprocess
import sys

from conftest import REPO

SIZES = REPO / "tools" / "sizes.py"
ARCHDOC = REPO / "tools" / "archdoc.py"


def run(tool, *args):
    return subprocess.run([sys.executable, str(tool), *args], capture_output=True, text=True,
                          timeout=120)


def write(root, files):
    for path, text in files.items():
        f = root / path
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)


def function(name, body_lines):
    """A function in the tree's brace style: signature and braces at column 0."""
    return f"static int {name}(int n)\n{{\n" + "\tn++;\n" * body_lines + "\treturn n;\n}\n"


def test_tree_keeps_both():
    r = run(SIZES)
    assert r.returncode == 0, r.stderr
    assert "no function over 60 lines" in r.stdout
    r = run(ARCHDOC)
    assert r.returncode == 0, r.stderr
    assert "each name in it exists" in r.stdout


def test_long_function_and_long_file_named(workdir):
    # 57 body lines + signature, two braces and the return: 61 lines
    write(workdir, {
        "common/base/a.c": function("fits", 56) + "\n" + function("too_long", 57),
        "daemon/big.c": "/* filler */\n" * 901,
    })
    r = run(SIZES, "--root", str(workdir))
    assert r.returncode == 1
    assert "common/base/a.c:" in r.stderr and "too_long() is 61 lines" in r.stderr
    assert "fits()" not in r.stderr
    assert "daemon/big.c: 901 lines" in r.stderr


def test_unnamed_file_and_missing_name_named(workdir):
    write(workdir, {
        "common/ARCHITECTURE.md": "`named.c` does one thing; `gone.c` is no more;\n"
                                  "`base/kept.h` is included as such.\n",
        "common/base/named.c": "",
        "common/base/kept.h": "",
        "daemon/orphan.c": "",
        "daemon/orphan.h": "",
        "daemon/lonely.h": "",
        "tools/x/tool.c": "",
    })
    r = run(ARCHDOC, "--root", str(workdir))
    assert r.returncode == 1
    err = r.stderr
    assert "daemon/orphan.c is not named" in err
    assert "daemon/lonely.h is not named" in err  # a header with no .c
    assert "orphan.h" not in err  # its .c stands for it
    assert "tools/x/tool.c is not named" in err
    assert "names gone.c, which is no file" in err
    assert "named.c is not" not in err and "kept.h" not in err
