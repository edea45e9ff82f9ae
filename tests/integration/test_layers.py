"""tools/layers.py, the check of who may call whom (common/ARCHITECTURE.md):
the tree keeps to it, and fabricated objects that break it are caught."""

import subprocess
import sys

from conftest import BUILD, REPO

LAYERS = REPO / "tools" / "layers.py"


def run_layers(*args):
    return subprocess.run([sys.executable, str(LAYERS), *args], capture_output=True, text=True,
                          timeout=120)


def fabricate(root, files):
    """Compile files {path: C text} under root into root/build/PATH.o."""
    for path, text in files.items():
        src = root / path
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(text)
        obj = root / "build" / (path[:-2] + ".o")
        obj.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cc", "-c", "-o", str(obj), str(src)], check=True)


def test_tree_keeps_the_rule():
    r = run_layers("--build", str(BUILD))
    assert r.returncode == 0, r.stderr
    assert "no cycle, none against the rule" in r.stdout


def test_cycle_between_two_files_fails_naming_both(workdir):
    fabricate(workdir, {
        "common/db/ping.c": "int pong(int n);\nint ping(int n) { return n ? pong(n - 1) : 0; }\n",
        "common/db/pong.c": "int ping(int n);\nint pong(int n) { return n ? ping(n - 1) : 1; }\n",
    })
    r = run_layers("--root", str(workdir), "--allow", "", "--no-cli")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "call cycle between common/db/ping.c, common/db/pong.c" in r.stderr
    assert "common/db/ping.c -> common/db/pong.c (pong)" in r.stderr
    assert "common/db/pong.c -> common/db/ping.c (ping)" in r.stderr


def test_call_up_the_layers_fails(workdir):
    fabricate(workdir, {
        "common/base/low.c": "int high(void);\nint low(void) { return high(); }\n",
        "common/device/high.c": "int high(void) { return 1; }\n",
        "tools/wearmon/cli.c": "int high(void);\nint cli(void) { return high(); }\n",
    })
    r = run_layers("--root", str(workdir), "--allow", "", "--no-cli")
    assert r.returncode == 1
    assert ("common/base/low.c (base) may not call common/device/high.c (device): high"
            in r.stderr)
    assert ("tools/wearmon/cli.c (wearmon) may not call common/device/high.c (device): high"
            in r.stderr)


def test_allow_list_names_the_issue_and_goes_stale(workdir):
    fabricate(workdir, {
        "common/io/a.c": "int b(void);\nint a(void) { return b(); }\n",
        "common/io/b.c": "int a(void);\nint b(void) { return a(); }\n",
    })
    allow = workdir / "allow"
    allow.write_text("common/io/b.c -> common/io/a.c issue 30: being split\n")
    r = run_layers("--root", str(workdir), "--allow", str(allow), "--no-cli")
    assert r.returncode == 0, r.stderr
    allow.write_text("common/io/b.c -> common/io/a.c issue 30: being split\n"
                     "common/io/a.c -> common/base/x.c issue 30: gone\n")
    r = run_layers("--root", str(workdir), "--allow", str(allow), "--no-cli")
    assert r.returncode == 1
    assert "allow:2: common/io/a.c calls nothing of common/base/x.c any more" in r.stderr
    allow.write_text("common/io/b.c -> common/io/a.c because\n")
    r = run_layers("--root", str(workdir), "--allow", str(allow), "--no-cli")
    assert r.returncode == 1
    assert "allow:1: expected" in r.stderr


def test_cli_links_no_device_code():
    nm = subprocess.run(["nm", str(BUILD / "wearmon")], capture_output=True, text=True,
                        check=True).stdout
    defined = {f[2] for f in (l.split() for l in nm.splitlines()) if len(f) == 3}
    for sym in ("act_run", "ata_secure_erase", "nvme_sanitize", "cfg_load", "engine_run",
                "tgt_check"):
        assert sym not in defined
    ldd = subprocess.run(["ldd", str(BUILD / "wearmon")], capture_output=True, text=True).stdout
    for lib in ("libblkid", "libinih", "libaio"):
        assert lib not in ldd
