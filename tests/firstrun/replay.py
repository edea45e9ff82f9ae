#!/usr/bin/python3
"""replay.py: the README's first run ("A first run on your own device"),
command by command as it stands, as an ordinary user with sudo, from a
checkout in that user's home, on a loop device made here.

The commands and first.conf are read from README.md, so the README and
this test cannot drift. The one substitution is the device: the README's
example path becomes the loop device, and, as the README says for a drive
without a serial, its expect_serial line is left out.

`sudo make install`, the user and its sudo rights must not touch the
machine that runs the test: everything happens in a throwaway root, an
overlay over / whose changes live in a tmpfs of a private mount namespace
(gone when the replay ends, however it ends), with the host's /dev, /proc
and /sys. The loop device and its backing file are made outside and removed
at the end.

Usage (as root): tests/firstrun/replay.py [--readme README.md] [--repo DIR]
Exit status 0 when every command succeeded; else 1, naming the first that
failed, with its output."""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SECTION = "## A first run on your own device"
USER = "labuser"
CHECKOUT = "wearmon"  # the checkout's directory in the user's home
DISK_BYTES = 64 << 20


def readme_steps(readme):
    """The section's first sh block (commands, one a line) and the files
    its ini blocks stand for: {name: text}, the name being the last
    `NAME.conf` the paragraph before the block mentions."""
    text = Path(readme).read_text()
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    section = text[start:end if end > 0 else len(text)]
    blocks = list(re.finditer(r"```(\w+)\n(.*?)```", section, re.S))
    sh = next(b.group(2) for b in blocks if b.group(1) == "sh")
    commands = [ln for ln in sh.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    files = {}
    for b in blocks:
        if b.group(1) != "ini":
            continue
        before = section[:b.start()].rstrip().split("\n\n")[-1]
        names = re.findall(r"`([\w.-]+\.conf)`", before)
        if not names:
            raise SystemExit("replay: an ini block of the first run names no file before it")
        files[names[-1]] = b.group(2)
    if not commands or not files:
        raise SystemExit(f"replay: no commands or no configuration under {SECTION!r}")
    return commands, files


def substitute(commands, files, dev):
    """The README's device becomes dev, and the serial it cannot report goes."""
    example = None
    for text in files.values():
        m = re.search(r"^device\s*=\s*(\S+)", text, re.M)
        example = example or (m and m.group(1))
    if not example:
        raise SystemExit("replay: the first run's configuration names no device")
    out = {}
    for name, text in files.items():
        text = text.replace(example, dev)
        out[name] = re.sub(r"^expect_serial\s*=.*\n", "", text, flags=re.M)
    return [c.replace(example, dev) for c in commands], out


def as_user(cmd, check_id, where=f"~/{CHECKOUT}"):
    """argv running cmd in bash as the user, in where, with the user's own
    environment (and the check run's mark, which finds what it left)."""
    env = ["env", f"WEARMON_CHECK_ID={check_id}"] if check_id else []
    return ["setpriv", f"--reuid={USER}", f"--regid={USER}", "--init-groups", "--reset-env",
            *env, "bash", "-c", f"cd {where} && {cmd}"]


def run_logged(argv, what):
    """Run argv, print its output; returns its exit status."""
    print(f"firstrun: $ {what}", flush=True)
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in p.stdout.splitlines():
        print(f"    {line}")
    return p.returncode


def overlay_root(work):
    """A writable copy-on-write view of / at work/merged, with the host's
    devices, a fresh /proc, and empty /run and /tmp."""
    ovl = work / "ovl"
    ovl.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", ovl], check=True)
    for d in ("upper", "work", "merged"):
        (ovl / d).mkdir()
    merged = ovl / "merged"
    subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                    f"lowerdir=/,upperdir={ovl}/upper,workdir={ovl}/work", merged], check=True)
    subprocess.run(["mount", "--rbind", "/dev", merged / "dev"], check=True)
    subprocess.run(["mount", "-t", "proc", "proc", merged / "proc"], check=True)
    subprocess.run(["mount", "--rbind", "/sys", merged / "sys"], check=True)
    for d in ("run", "tmp"):
        subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=1777" if d == "tmp" else "mode=0755",
                        "tmpfs", merged / d], check=True)
    return merged


def pack_checkout(repo, dest):
    """The checkout as its owner has it, without what a build made."""
    subprocess.run(["tar", "-C", repo, "--exclude=./build", "-cf", dest, "."], check=True)


def inner(args):
    """In the private mount namespace: the throwaway root, the user, the
    checkout, then every command of the README in turn."""
    work, dev, repo = Path(args.inner[0]), args.inner[1], args.inner[2]
    commands, files = substitute(*readme_steps(args.readme), dev)
    merged = overlay_root(work)
    pack_checkout(repo, merged / "tmp" / "checkout.tar")
    os.chroot(merged)
    os.chdir("/")
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", USER], check=True)
    Path(f"/etc/sudoers.d/{USER}").write_text(f"{USER} ALL=(ALL:ALL) NOPASSWD: ALL\n")
    os.chmod(f"/etc/sudoers.d/{USER}", 0o440)
    check_id = os.environ.get("WEARMON_CHECK_ID", "")
    unpack = f"mkdir ~/{CHECKOUT} && tar -C ~/{CHECKOUT} -xf /tmp/checkout.tar"
    if run_logged(as_user(unpack, check_id, where="~"), unpack):
        return 1
    for name, text in files.items():
        tmp = Path("/tmp") / name
        tmp.write_text(text)
        os.chmod(tmp, 0o644)
        step = f"cp /tmp/{name} {name}"
        print(f"firstrun: {name} from the README:\n" + "".join(f"    {ln}\n" for ln in
                                                             text.splitlines()), end="")
        if run_logged(as_user(step, check_id), step):
            return 1
    for n, cmd in enumerate(commands, 1):
        rc = run_logged(as_user(cmd, check_id), cmd)
        if rc:
            print(f"firstrun: FAILED at command {n} of {len(commands)} (exit {rc}): {cmd}")
            return 1
    print(f"firstrun: all {len(commands)} commands of the README's first run succeeded")
    return 0


def outer(args):
    if os.geteuid() != 0:
        raise SystemExit("replay: run as root (it makes a loop device and a private root)")
    mode = os.stat("/dev/null").st_mode & 0o777
    if mode & 0o666 != 0o666:  # the user's shell could redirect nothing
        raise SystemExit(f"replay: this machine's /dev/null is mode {mode:o}, not writable by"
                         " an ordinary user as on any Debian machine; run chmod 666 /dev/null")
    tmp = os.environ.get("WEARMON_TEST_TMP", "/var/tmp")
    work = Path(tempfile.mkdtemp(prefix="wearmon-firstrun-", dir=tmp))
    dev = None
    try:
        img = work / "disk.img"
        with open(img, "wb") as f:
            f.truncate(DISK_BYTES)
        dev = subprocess.run(["losetup", "--show", "-f", img], check=True, capture_output=True,
                             text=True).stdout.strip()
        p = subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable,
                            __file__, "--readme", args.readme, "--inner", str(work), dev,
                            args.repo])
        return p.returncode
    finally:
        if dev:
            subprocess.run(["losetup", "-d", dev])
        shutil.rmtree(work, ignore_errors=True)


def main():
    here = Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--readme", default=str(here / "README.md"))
    ap.add_argument("--repo", default=str(here))
    ap.add_argument("--inner", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--list", action="store_true",
                    help="print the commands and files read from the README, run nothing")
    args = ap.parse_args()
    if args.list:
        commands, files = readme_steps(args.readme)
        for c in commands:
            print(shlex.quote(c))
        for name, text in files.items():
            print(f"--- {name}\n{text}", end="")
        return 0
    return inner(args) if args.inner else outer(args)


if __name__ == "__main__":
    sys.exit(main())
