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
    """Write files {path: text} under root and compile each .c into
    root/build/PATH.o (headers from root/common, as the Makefile's -Icommon)."""
    for path, text in files.items():
        src = root / path
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(text)
    for path in files:
        if path.endswith(".c"):
            obj = root / "build" / (path[:-2] + ".o")
            obj.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["cc", "-I", str(root / "common"), "-c", "-o", str(obj),
                            str(root / path)], check=True)


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
        "common/base/low.c": "#include \"device/high.h\"\nint low(void) { return high(); }\n",
        "common/device/high.h": "int high(void);\n",
        "common/device/high.c": "int high(void) { return 1; }\n",
        "tools/wearmon/cli.c": "int high(void);\nint cli(void) { return high(); }\n",
    })
    r = run_layers("--root", str(workdir), "--allow", "", "--no-cli")
    assert r.returncode == 1
    assert ("common/base/low.c (base) may not call common/device/high.c (device): high"
            in r.stderr)
    assert ("common/base/low.c (base) may not include common/device/high.h (device)"
            in r.stderr)
    assert ("tools/wearmon/cli.c (wearmon) may not call common/device/high.c (device): high"
            in r.stderr)


def test_file_of_no_layer_fails(workdir):
    fabricate(workdir, {"common/misc/x.c": "int x(void) { return 0; }\n"})
    r = run_layers("--root", str(workdir), "--allow", "", "--no-cli")
    assert r.returncode == 1
    assert "common/misc/x.c belongs to no layer" in r.stderr


def test_allow_list_gives_a_reason_and_goes_stale(workdir):
    fabricate(workdir, {
        "common/io/a.c": "int b(void);\nint a(void) { return b(); }\n",
        "common/io/b.c": "int a(void);\nint b(void) { return a(); }\n",
    })
    allow = workdir / "allow"
    allow.write_text("common/io/b.c -> common/io/a.c: the wake-up moves down into a.c\n")
    r = run_layers("--root", str(workdir), "--allow", str(allow), "--no-cli")
    assert r.returncode == 0, r.stderr
    allow.write_text("common/io/b.c -> common/io/a.c: the wake-up moves down into a.c\n"
                     "common/io/a.c -> common/base/x.c: a helper that is gone\n")
    r = run_layers("--root", str(workdir), "--allow", str(allow), "--no-cli")
    assert r.returncode == 1
    assert "allow:2: common/io/a.c calls nothing of common/base/x.c any more" in r.stderr
    # No reason, a one-word reason, and a reason that only cites a number.
    for line in ("common/io/b.c -> common/io/a.c\n",
                 "common/io/b.c -> common/io/a.c: because\n",
                 "common/io/b.c -> common/io/a.c issue 30: being split\n"):
        allow.write_text(line)
        r = run_layers("--root", str(workdir), "--allow", str(allow), "--no-cli")
        assert r.returncode == 1, line
        assert "allow:1: expected" in r.stderr, line
    allow.write_text("common/io/b.c -> common/io/a.c: being split, see issue 30\n")
    r = run_layers("--root", str(workdir), "--allow", str(allow), "--no-cli")
    assert r.returncode == 1
    assert "allow:1: the reason cites an issue number" in r.stderr


def test_cli_linking_device_code_fails(workdir):
    # test_cli.py checks the real build/wearmon; here the check itself.
    fabricate(workdir, {
        "common/device/erase.c": "int erase(void) { return 0; }\n",
        "tools/wearmon/main.c": "int erase(void);\nint main(void) { return erase(); }\n",
    })
    build = workdir / "build"
    subprocess.run(["cc", "-o", str(build / "wearmon"), str(build / "tools/wearmon/main.o"),
                    str(build / "common/device/erase.o")], check=True)
    r = run_layers("--root", str(workdir), "--allow", "")
    assert r.returncode == 1
    assert "wearmon links common/device/erase.c (device layer): erase" in r.stderr
