"""tools/install-deps.sh --check always answers: the packages missing and
the command that installs them (exit 1), or that all of the groups asked
for are installed (exit 0); it never prints nothing. The missing case hides
one package from the real dpkg-query (a wrapper on PATH that answers "not
installed" for it and passes every other question on), so no package is
removed from the machine."""

import os
import subprocess

from conftest import REPO

SCRIPT = REPO / "tools/install-deps.sh"


def check(*groups, env=None):
    return subprocess.run(["sh", str(SCRIPT), "--check", *groups], capture_output=True,
                          text=True, timeout=120, env=env)


def test_check_says_what_is_missing_or_that_nothing_is(workdir):
    p = check("build", "run")
    assert p.stdout.strip(), "install-deps.sh --check printed nothing"
    if p.returncode == 0:
        assert p.stdout.startswith("all ") and "build+run are installed" in p.stdout, p.stdout
    else:
        assert p.stdout.startswith("missing Debian packages (build+run):"), p.stdout

    # one package hidden: it is named, with the command that installs it
    shim = workdir / "bin"
    shim.mkdir()
    (shim / "dpkg-query").write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do [ "$a" = sqlite3 ] && { echo "unknown ok not-installed"; exit 0; }; done\n'
        'exec /usr/bin/dpkg-query "$@"\n')
    (shim / "dpkg-query").chmod(0o755)
    env = dict(os.environ, PATH=f"{shim}:{os.environ['PATH']}")
    p = check("run", env=env)
    assert p.returncode == 1, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("missing Debian packages (run):") and " sqlite3" in lines[0], lines
    assert lines[1] == "install them: sudo tools/install-deps.sh run", lines
