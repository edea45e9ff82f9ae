"""Paths only their owner can redirect: a database, lock or
metrics path reached through a symlink another user could have placed is
refused, and every directory above alert_command, secure_erase_command and
the configuration must be root's and closed to others (sshd's StrictModes).
The other user is `nobody`: links are handed to it with os.lchown, in
directories the test makes under its own work directory."""

import os
import pwd

from conftest import run_wearmond, target_conf, write_conf

NOBODY = pwd.getpwnam("nobody").pw_uid

QUICK = {
    "sizes": "1M 2M",
    "fill": "no",
    "workload": "randwrite",
    "block_size": "4k",
    "queue_depth": "4",
    "amount": "1x",
    "cycles": "1",
    "sample_interval": "0.1s",
}


def conf_for(workdir, db, **over):
    text = target_conf(db, workdir / "t.img", {**QUICK, "file_size": "8M"}, name="f1", **over)
    return write_conf(workdir / "w.conf", text)


def shared_dir(workdir, name="shared", mode=0o1777):
    d = workdir / name
    d.mkdir()
    d.chmod(mode)
    return d


def foreign_link(at, target, uid=NOBODY):
    os.symlink(target, at)
    os.lchown(at, uid, uid)
    return at


def refused(conf, *needles):
    for extra in (("--check",), ()):
        p = run_wearmond(conf, *extra, timeout=60)
        assert p.returncode == 78, (extra, p.stderr)
        for n in needles:
            assert n in p.stderr, (extra, n, p.stderr)


# ---- the database, its lock and the metrics file: no foreign symlinks -------


def test_database_through_a_foreign_symlink_in_a_sticky_dir_is_refused(workdir):
    real = workdir / "real"
    real.mkdir()
    shared = shared_dir(workdir)
    link = foreign_link(shared / "db", real)
    refused(conf_for(workdir, link / "w.db"),
            f"the database {link}/w.db: refusing the path: it goes through symlink {link}, "
            f"owned by uid {NOBODY} (nobody), in directory {shared} that others can write "
            "(mode 1777)")
    assert list(real.iterdir()) == [], "nothing is created where the link points"

    # the same link owned by root is what fs.protected_symlinks allows too
    os.lchown(link, 0, 0)
    p = run_wearmond(conf_for(workdir, link / "w.db"), "--check", timeout=60)
    assert p.returncode == 0, p.stderr


def test_database_file_itself_a_foreign_symlink_is_refused(workdir):
    shared = shared_dir(workdir)
    target = workdir / "elsewhere.db"
    link = foreign_link(shared / "w.db", target)
    refused(conf_for(workdir, link),
            f"the database {link}: refusing the path: it goes through symlink {link}, "
            f"owned by uid {NOBODY} (nobody)")
    assert not target.exists()


def test_lock_path_a_foreign_symlink_is_refused(workdir):
    shared = shared_dir(workdir)
    db = shared / "w.db"
    victim = workdir / "victim"
    victim.write_text("keep\n")
    link = foreign_link(shared / "w.db.lock", victim)
    refused(conf_for(workdir, db),
            f"the database's lock {link}: refusing the path: it goes through symlink {link}, "
            f"owned by uid {NOBODY} (nobody)")
    assert victim.read_text() == "keep\n"
    assert not db.exists()


def test_symlink_in_a_group_writable_dir_without_sticky_bit_is_refused(workdir):
    """A root link, but in a directory its group can write and rename in:
    anyone in the group can swap it."""
    real = workdir / "real"
    real.mkdir()
    open_dir = shared_dir(workdir, "open", 0o775)
    link = open_dir / "db"
    os.symlink(real, link)
    refused(conf_for(workdir, link / "w.db"),
            f"it goes through symlink {link}, owned by uid 0 (root), in directory "
            f"{open_dir} that its group can write without the sticky bit (mode 0775)")


def test_metrics_file_through_a_foreign_symlink_is_refused(workdir):
    real = workdir / "real"
    real.mkdir()
    shared = shared_dir(workdir)
    link = foreign_link(shared / "m", real)
    text = conf_for(workdir, workdir / "w.db").read_text().replace(
        "[wearmon]\n", f"[wearmon]\nmetrics_file = {link}/wearmon.prom\n")
    conf = write_conf(workdir / "w.conf", text)
    refused(conf, f"{conf}:2: metrics_file: the metrics file {link}/wearmon.prom: refusing the "
            f"path: it goes through symlink {link}, owned by uid {NOBODY} (nobody)")
    assert not (workdir / "w.db").exists()


# ---- the directories above what root runs or reads --------------------------


def script_in(d, name="alert.sh"):
    s = d / name
    s.write_text("#!/bin/sh\nexit 0\n")
    s.chmod(0o755)
    return s


def test_alert_command_in_a_world_writable_dir_is_refused(workdir):
    bindir = shared_dir(workdir, "bin", 0o777)
    script = script_in(bindir)
    conf = conf_for(workdir, workdir / "w.db", alert_command=script)
    refused(conf, f"alert_command: program {script}: directory {bindir} above it is writable "
            "by others without the sticky bit (mode 0777)")
    assert not (workdir / "w.db").exists()

    # sticky, root's (as /tmp and /var/tmp): others cannot replace root's entries
    bindir.chmod(0o1777)
    p = run_wearmond(conf, "--check", timeout=60)
    assert p.returncode == 0, p.stderr


def test_secure_erase_command_in_a_foreign_dir_is_refused(workdir):
    bindir = workdir / "bin"
    bindir.mkdir()
    erase = script_in(bindir, "erase.sh")
    os.chown(bindir, NOBODY, NOBODY)
    conf = conf_for(workdir, workdir / "w.db", secure_erase="command",
                    secure_erase_command=erase)
    refused(conf, f"secure_erase_command: program {erase}: directory {bindir} above it is "
            f"owned by uid {NOBODY} (nobody), not root (mode 0755)")


def test_alert_command_through_a_foreign_symlink_is_refused(workdir):
    bindir = workdir / "bin"
    bindir.mkdir()
    script = script_in(bindir)
    shared = shared_dir(workdir)
    link = foreign_link(shared / "alert", script)
    conf = conf_for(workdir, workdir / "w.db", alert_command=link)
    refused(conf, f"alert_command: program {link}: refusing the path: it goes through "
            f"symlink {link}, owned by uid {NOBODY} (nobody)")


def test_configuration_in_a_world_writable_dir_is_refused(workdir):
    confdir = shared_dir(workdir, "etc", 0o757)
    conf = write_conf(confdir / "w.conf", conf_for(workdir, workdir / "w.db").read_text())
    refused(conf, f"configuration {conf}: directory {confdir} above it is writable by "
            "others without the sticky bit (mode 0757)")
    assert not (workdir / "w.db").exists()
