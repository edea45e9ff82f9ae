"""`make check` ends by looking for what its tests left behind
(tools/run-check.sh): a process it started, a loop device on one of its
files, a mount under its directory. This runs the script with a stage made
to leave a process and a loop device, and checks both are reported, the run
fails and its closing line still counts."""

import os
import signal
import subprocess

from conftest import REPO


def test_leftovers_are_reported_and_fail_the_run():
    env = dict(os.environ, STAGES="leak-selftest", WEARMON_CHECK_SELFTEST="1")
    for k in ("WEARMON_CHECK_ID", "WEARMON_TEST_TMP", "TMPDIR"):
        env.pop(k, None)
    p = subprocess.run([str(REPO / "tools" / "run-check.sh")], capture_output=True, text=True,
                       env=env, timeout=120, cwd=REPO)
    lines = p.stdout.splitlines()
    try:
        assert p.returncode != 0
        assert "=== check: tests left these behind:" in lines
        assert any("sleep 1000000" in line for line in lines), p.stdout
        assert any("/leak.img" in line and line.startswith("/dev/loop") for line in lines), p.stdout
        assert lines[-1].startswith("check: 0 passed, 1 failed"), lines[-1]
    finally:
        # Clean up what the stage left, whatever the assertions said.
        for line in lines:
            if "sleep 1000000" in line:
                try:
                    os.kill(int(line.split()[0]), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            if line.startswith("/dev/loop") and "/leak.img" in line:
                dev, back = line.split()[:2]
                subprocess.run(["losetup", "-d", dev], capture_output=True)
                subprocess.run(["rm", "-rf", os.path.dirname(back)], capture_output=True)
