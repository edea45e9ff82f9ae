"""The README's first run works as written: tests/firstrun/replay.py
replays its commands as they stand, as an ordinary user with sudo, from a
checkout in that user's home, on a loop device, in a throwaway root (an
overlay over /: nothing it installs stays on the machine)."""

import subprocess
import sys

from conftest import REPO


def test_readme_first_run_replays_as_an_ordinary_user():
    p = subprocess.run([sys.executable, str(REPO / "tests" / "firstrun" / "replay.py"),
                        "--repo", str(REPO), "--readme", str(REPO / "README.md")],
                       capture_output=True, text=True, timeout=3600)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "firstrun: all 9 commands of the README's first run succeeded" in out, out
    # what the run was for: the plan named the device, the run measured
    assert "target spare: ready" in out, out
    assert "campaign    new: no history of target spare" in out, out
    assert "wearmond: info: wearmond stopped (cycles done), exit status 0" in out, out
    assert out.count("[done]") >= 8, out
