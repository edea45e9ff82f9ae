"""wearmond --check prints the plan of every target (text and JSON): the
device and what is on it now, what will be destroyed, the sizes and steps,
the bytes and estimate of a cycle, the action between cycles and the
campaign's state in the database; refusals keep their reason and exit 78.
Also the refusals that say what to do next: a complete campaign, a device
without a serial under expect_serial, a key typo, and the CLI on a database
it may not read."""

import json
import os
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

from conftest import (MiB, WEARMOND, WEARMON, query, run_wearmond, sh, start_wearmond, stop,
                      target_conf, wait_for, write_conf)

NOBODY = 65534

QUICK = {
    "sizes": "25%:100%:25%",
    "workload": "randwrite",
    "block_size": "4k",
    "queue_depth": "8",
    "amount": "1x",
    "duration": "5m",
    "between_cycles": "trim",
    "cycles": "2",
    "sample_interval": "0.25s",
}


def check(conf, *extra):
    return subprocess.run([str(WEARMOND), "--check", "-c", str(conf), *extra],
                          capture_output=True, text=True, timeout=120)


def check_json(conf, *extra):
    p = check(conf, "--json", *extra)
    return p, json.loads(p.stdout)


def ext4_loop(make_loop, label="labdata"):
    loop = make_loop(64 * MiB)
    sh("mkfs.ext4", "-q", "-F", "-L", label, loop.dev)
    return loop


def test_check_names_the_filesystem_it_destroys(workdir, make_loop):
    loop = ext4_loop(make_loop)
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(db, loop.dev, QUICK, name="spare"))
    before = loop.checksum()
    p = check(conf)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "target spare: ready" in out
    assert 'now on it   ext4 filesystem labelled "labdata"' in out
    destroys = next(line for line in out.splitlines() if line.strip().startswith("destroys"))
    assert f"everything on {loop.dev} (64.00 MiB)" in destroys
    assert 'the ext4 filesystem labelled "labdata" and every file in it' in destroys
    assert "4 sizes from 16.00 MiB to 64.00 MiB" in out
    assert "writes      320.00 MiB per cycle" in out
    assert "estimate    unknown: no earlier measurement" in out
    assert "the measured phases take at most 20 min 00 s per cycle" in out
    assert "then        trim (of the region) between cycles; 2 cycles per campaign" in out
    assert f"campaign    new: no history of target spare in {db}" in out
    assert f"configuration {conf}: OK, 1 target ready" in out
    # --check writes nothing: the device and the database are as they were
    assert loop.checksum() == before
    assert not db.exists()


def test_check_json_field_by_field(workdir, make_loop):
    loop = ext4_loop(make_loop, label="scratch")
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(db, loop.dev, QUICK))
    p, doc = check_json(conf)
    assert p.returncode == 0, p.stderr
    assert doc["config"] == str(conf) and doc["database"] == str(db)
    assert doc["ready"] is True and doc["exit_status"] == 0 and doc["refusals"] == []
    assert doc["database_in_use_by_pid"] is None
    [t] = doc["targets"]
    assert t["name"] == "lab1" and t["ready"] is True and t["refusals"] == []
    dev = t["device"]
    assert dev["path"] == loop.dev and dev["kind"] == "block"
    assert dev["sysname"] == os.path.basename(loop.dev)
    assert dev["capacity_bytes"] == 64 * MiB and dev["logical_block_size"] == 512
    assert dev["rotational"] in (True, False)
    assert dev["serial"] is None and dev["model"] is None and dev["firmware"] is None
    assert "no serial number" in dev["pinned"]
    c = t["contents"]
    assert c["filesystem"] == "ext4" and c["usage"] == "filesystem"
    assert c["label"] == "scratch" and len(c["uuid"]) == 36
    assert c["partition_table"] is None and c["partitions"] == [] and c["mounted_at"] is None
    assert 'ext4 filesystem labelled "scratch"' in c["summary"]
    assert 'the ext4 filesystem labelled "scratch"' in t["destroys"]
    assert t["region"] == {"offset_bytes": 0, "size_bytes": 64 * MiB}
    sizes = [s["size_bytes"] for s in t["sizes"]]
    assert sizes == [16 * MiB, 32 * MiB, 48 * MiB, 64 * MiB]
    for s in t["sizes"]:
        fill, measure = s["steps"]
        assert fill["phase"] == "fill" and fill["block_size"] == 128 * 1024
        assert fill["bytes"] == fill["written_bytes"] == s["size_bytes"]
        assert fill["duration_limit_seconds"] is None
        assert measure["phase"] == "randwrite" and measure["block_size"] == 4096
        assert measure["queue_depth"] == 8 and measure["runs"] == 1
        assert measure["runs_at_most"] is False
        assert measure["bytes"] == measure["written_bytes"] == s["size_bytes"]
        assert measure["duration_limit_seconds"] == 300
        for step in (fill, measure):
            assert step["rate_mibps"] is None and step["rate_cycle"] is None
            assert step["seconds_estimate"] is None
    cyc = t["cycle"]
    assert cyc["written_bytes"] == 2 * (16 + 32 + 48 + 64) * MiB and cyc["read_bytes"] == 0
    assert cyc["seconds_estimate"] is None and cyc["seconds_known"] == 0
    assert cyc["steps_unknown"] == 8 and cyc["measured_seconds_at_most"] == 4 * 300
    assert t["between_cycles"] == ["trim"] and t["trim_scope"] == "region"
    assert t["cycles"] == 2 and t["pause_seconds"] == 0
    camp = t["campaign"]
    assert camp["state"] == "new" and camp["cycle"] == 1 and camp["cycles_done"] == 0
    assert camp["size"] is None and camp["iteration"] is None
    assert camp["summary"].startswith("new: no history of target lab1")


def test_complete_campaign_shows_its_state_and_the_way_to_a_new_one(workdir, make_loop):
    loop = make_loop(32 * MiB)
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(db, loop.dev, {
        **QUICK, "cycles": "1", "duration": "0"}))
    p = run_wearmond(conf, timeout=300)
    assert p.returncode == 0, p.stderr
    # a second start has nothing to do and says how to begin anew
    p = run_wearmond(conf, timeout=120)
    assert p.returncode == 0, p.stderr
    assert (f"target lab1: campaign complete (1 cycles), nothing to do; to begin a new "
            f"campaign: wearmond --new-campaign lab1 -c {conf}") in p.stderr

    p = check(conf)
    assert p.returncode == 0, p.stderr
    assert (f"campaign    complete: 1 of 1 cycles done, nothing to run; to begin a new "
            f"campaign: wearmond --new-campaign lab1 -c {conf}") in p.stdout
    # the rates of that cycle make the estimate
    assert "estimate    ~" in p.stdout and "from the rates this target measured" in p.stdout
    p, doc = check_json(conf)
    [t] = doc["targets"]
    assert t["campaign"]["state"] == "complete" and t["campaign"]["cycles_done"] == 1
    done = {(r["size_bytes"], r["workload"]): r for r in query(
        db, "SELECT size_bytes, workload, mibps_avg, fill_mibps FROM iterations"
            " WHERE status = 'done'")}
    total = 0.0
    for s in t["sizes"]:
        fill, measure = s["steps"]
        row = done[(s["size_bytes"], "randwrite")]
        assert abs(measure["rate_mibps"] - row["mibps_avg"]) < 0.01
        assert abs(fill["rate_mibps"] - row["fill_mibps"]) < 0.01
        assert measure["rate_cycle"] == 1 == fill["rate_cycle"]
        for step in (fill, measure):
            want = step["bytes"] / MiB / step["rate_mibps"]
            assert abs(step["seconds_estimate"] - want) < 0.01
            total += step["seconds_estimate"]
    assert t["cycle"]["steps_unknown"] == 0
    assert abs(t["cycle"]["seconds_estimate"] - total) < 0.01

    # asking for a new campaign: --check shows it would begin one
    p, doc = check_json(conf, "--new-campaign", "lab1")
    assert p.returncode == 0, p.stderr
    camp = doc["targets"][0]["campaign"]
    assert camp["state"] == "new-campaign" and camp["cycle"] == 2
    assert "(--new-campaign)" in camp["summary"]
    # raising cycles extends the campaign: it goes on with the next cycle
    write_conf(conf, target_conf(db, loop.dev, {**QUICK, "cycles": "2", "duration": "0"}))
    p, doc = check_json(conf)
    camp = doc["targets"][0]["campaign"]
    assert camp["state"] == "next-cycle" and camp["cycle"] == 2 and camp["cycles_done"] == 1
    assert camp["summary"] == "goes on with cycle 2 (1 of 2 cycles of this campaign done)"
    # and a changed campaign key begins a new one, naming it
    write_conf(conf, target_conf(db, loop.dev, {**QUICK, "cycles": "1", "duration": "0",
                                                "block_size": "8k"}))
    camp = check_json(conf)[1]["targets"][0]["campaign"]
    assert camp["state"] == "new-campaign" and "block_size" in camp["changed"]


def test_resumed_campaign_shows_cycle_size_and_iteration(workdir):
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(db, workdir / "t.img", {
        "file_size": "16M", "sizes": "1M 2M 4M", "fill": "no", "workload": "randwrite",
        "block_size": "4k", "queue_depth": "1", "amount": "1000x", "duration": "1s",
        "cycles": "2", "sample_interval": "0.25s"}))
    d = start_wearmond(conf)
    assert wait_for(lambda: query(db, "SELECT 1 FROM iterations WHERE status = 'done'"
                                      " AND more_rows = 0"), 60)
    rc, _, err = stop(d)
    assert rc == 0, err
    # what the start's own rules make of the rows (db_resume_point): the
    # last cycle, unfinished, goes on at its first size not done
    [last] = query(db, "SELECT c.number AS cycle, c.status,"
                       " (SELECT coalesce(max(CASE WHEN i.status = 'done' AND i.more_rows = 0"
                       "  THEN i.size_index END) + 1, 0) FROM iterations i"
                       "  WHERE i.cycle_id = c.id) AS next_size,"
                       " (SELECT coalesce(max(i.number), 0) + 1 FROM iterations i"
                       "  WHERE i.cycle_id = c.id) AS next_iteration"
                       " FROM cycles c ORDER BY c.number DESC LIMIT 1")
    assert last["status"] in ("running", "interrupted"), last
    p = check(conf)
    assert p.returncode == 0, p.stderr
    if last["next_size"] < 3:
        want = (f"resumes cycle {last['cycle']} at size {last['next_size'] + 1} of 3, "
                f"iteration {last['next_iteration']}")
    else:
        want = f"resumes cycle {last['cycle']} at its between-cycles action"
    assert f"campaign    {want}" in p.stdout
    camp = check_json(conf)[1]["targets"][0]["campaign"]
    assert camp["state"] == "resumes" and camp["cycle"] == last["cycle"]
    assert camp["size"] == last["next_size"] + 1
    assert camp["iteration"] == last["next_iteration"]
    assert camp["summary"] == want
    # --check changed nothing: the same resume point, no row marked
    assert query(db, "SELECT count(*) AS n FROM iterations WHERE status = 'running'")[0]["n"] \
        == camp["iterations_left_running"]


def test_refused_target_shows_its_reason_and_exits_78(workdir, make_loop):
    loop = ext4_loop(make_loop)
    ok = make_loop(32 * MiB)
    db = workdir / "w.db"
    text = (f"[wearmon]\ndatabase = {db}\n\n[target bad]\ndevice = {loop.dev}\n"
            + "".join(f"{k} = {v}\n" for k, v in QUICK.items())
            + f"\n[target good]\ndevice = {ok.dev}\nallow_destroy = yes\n"
            + "".join(f"{k} = {v}\n" for k, v in QUICK.items()))
    conf = write_conf(workdir / "w.conf", text)
    p = check(conf)
    assert p.returncode == 78, p.stdout + p.stderr
    assert "target bad: REFUSED" in p.stdout and "target good: ready" in p.stdout
    reason = (f"refusing to write to block device {loop.dev}: it holds a ext4 filesystem "
              "that would be destroyed; set allow_destroy = yes in [target bad]")
    assert f"refused     {conf}:4: allow_destroy: {reason}" in p.stdout
    assert reason in p.stderr
    assert 'now on it   ext4 filesystem labelled "labdata"' in p.stdout
    assert f"configuration {conf}: REFUSED: 1 of 2 targets refused (exit 78)" in p.stdout

    p, doc = check_json(conf)
    assert p.returncode == 78
    assert doc["ready"] is False and doc["exit_status"] == 78
    assert any(reason in r for r in doc["refusals"])
    bad, good = doc["targets"]
    assert bad["ready"] is False and len(bad["refusals"]) == 1 and reason in bad["refusals"][0]
    assert bad["contents"]["filesystem"] == "ext4" and bad["sizes"] == []
    assert good["ready"] is True and good["refusals"] == [] and len(good["sizes"]) == 4
    assert not db.exists()


def test_refused_configuration_is_one_json_document(workdir):
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(db, workdir / "t.img", {
        "file_size": "16M", "alow_destroy": "yes"}))
    p, doc = check_json(conf)
    assert p.returncode == 78, p.stderr
    # the typo keeps its did-you-mean, in the log and in the document
    typo = 'unknown key "alow_destroy" in [target lab1] (did you mean "allow_destroy"?)'
    assert typo in p.stderr
    assert doc["ready"] is False and doc["exit_status"] == 78 and doc["targets"] == []
    assert any(typo in r for r in doc["refusals"])

    write_conf(conf, target_conf(db, workdir / "t.img", {"file_size": "16M"}))
    conf.chmod(0o666)
    p, doc = check_json(conf)
    assert p.returncode == 78 and doc["config"] == str(conf)
    assert any(f"configuration {conf} is writable by others (mode 0666), owned by uid 0 "
               f"(root): anyone who can change it controls what wearmond does; run sudo "
               f"chmod go-w {conf}" in r for r in doc["refusals"])


def test_serial_expected_of_a_device_without_one_says_how_it_is_pinned(workdir, make_loop):
    loop = make_loop(32 * MiB)
    conf = write_conf(workdir / "w.conf", target_conf(
        workdir / "w.db", loop.dev, QUICK, expect_serial="S4EWNX0R123456"))
    p = check(conf)
    assert p.returncode == 78, p.stdout + p.stderr
    want = (f"refusing {loop.dev}: it reports no serial number (NVMe Identify, ATA IDENTIFY, "
            'the SCSI serial number page and sysfs give none), so expect_serial = "S4EWNX0R123456" cannot be checked; '
            "remove expect_serial from [target lab1]: a device without a serial is pinned "
            "by its model, capacity and backing file, recorded in the database at its first "
            "start and compared at every start, and by its device number during a run")
    assert want in p.stderr and want in p.stdout


def test_cli_on_a_database_it_may_not_read_says_sudo_or_the_group():
    # a directory of its own that others may enter (the run's temporary
    # directory is root's and closed), removed at the end
    d = Path(tempfile.mkdtemp(prefix="wearmon-test-cli-", dir="/var/tmp"))
    try:
        d.chmod(0o755)
        cli_permissions(d)
    finally:
        shutil.rmtree(d)


def cli_permissions(d):
    db = d / "w.db"
    conf = write_conf(d / "w.conf", target_conf(db, d / "t.img", {
        "file_size": "8M", "sizes": "1M", "fill": "no", "duration": "0.2s", "cycles": "1"}))
    assert run_wearmond(conf, timeout=120).returncode == 0
    as_nobody = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                 str(WEARMON), "-d", str(db), "status"]
    # readable by all, as the unit's UMask=0022 leaves it: no advice needed
    p = subprocess.run(as_nobody, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    db.chmod(0o600)
    p = subprocess.run(as_nobody, capture_output=True, text=True, timeout=60)
    assert p.returncode == 1, p.stdout
    assert (f"wearmon: cannot read database {db}: permission denied: it is root:root, "
            f"mode 0600, and you are uid {NOBODY}") in p.stderr
    assert "wearmon: run the same command with sudo" in p.stderr
    assert "sudo usermod -aG wearmon" in p.stderr
    db.chmod(0o644)
    d.chmod(0o700)
    p = subprocess.run(as_nobody, capture_output=True, text=True, timeout=60)
    assert p.returncode == 1, p.stdout
    assert (f"permission denied: the directory {d} is root:root, mode 0700, and you are "
            f"uid {NOBODY}") in p.stderr
    assert "run the same command with sudo" in p.stderr


def test_configuration_in_a_users_checkout_names_the_copy_that_fixes_it(workdir):
    checkout = workdir / "home" / "lab" / "wearmon"
    checkout.mkdir(parents=True)
    for d in (workdir / "home" / "lab", checkout):
        os.chown(d, NOBODY, NOBODY)
    conf = write_conf(checkout / "first.conf",
                      target_conf(workdir / "w.db", workdir / "t.img", {"file_size": "8M"}))
    os.chown(conf, NOBODY, NOBODY)
    p = check(conf)
    assert p.returncode == 78, p.stdout + p.stderr
    assert (f"configuration {conf}: directory {workdir}/home/lab above it is owned by uid "
            f"{NOBODY} (nobody), not root (mode 0755): its owner can replace what wearmond "
            f"runs or reads; copy it where only root can change it: sudo install -D -o root "
            f"-g root -m 0644 {conf} /etc/wearmon/first.conf, then run wearmond -c "
            "/etc/wearmon/first.conf") in p.stderr
    assert "chown" not in p.stderr
    # the copy it names is trusted: the same file, root's, in a root directory
    etc = workdir / "etc" / "wearmon"
    etc.mkdir(parents=True)
    subprocess.run(["install", "-o", "root", "-g", "root", "-m", "0644", str(conf),
                    str(etc / "first.conf")], check=True)
    p = check(etc / "first.conf")
    assert p.returncode == 0, p.stdout + p.stderr


def dos_table(dev, parts):
    """Write an MBR partition table (start, sectors) to the loop device dev
    (the test's own) and tell the kernel of its partitions."""
    mbr = bytearray(512)
    for i, (start, count) in enumerate(parts):
        mbr[446 + 16 * i:462 + 16 * i] = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83,
                                                     b"\0\0\0", start, count)
    mbr[510:512] = b"\x55\xaa"
    with open(dev, "r+b") as f:
        f.write(mbr)
    sh("partx", "-a", dev)


def test_partitions_and_a_mount_are_named(workdir, make_loop):
    loop = make_loop(64 * MiB)
    mnt = workdir / "mnt"
    mnt.mkdir()
    try:
        dos_table(loop.dev, [(2048, 32768), (34816, 131072 - 34816)])
        p1, p2 = f"{loop.dev}p1", f"{loop.dev}p2"
        sh("mkfs.ext4", "-q", "-F", "-L", "boot", p1)
        sh("mkfs.ext4", "-q", "-F", p2)
        conf = write_conf(workdir / "w.conf", target_conf(workdir / "w.db", loop.dev, QUICK))
        p = check(conf)
        assert p.returncode == 0, p.stdout + p.stderr
        name = os.path.basename(loop.dev)
        assert (f"now on it   dos partition table, 2 partitions: {name}p1: ext4 \"boot\", "
                f"not mounted; {name}p2: ext4, not mounted") in p.stdout, p.stdout
        assert (f"everything on {loop.dev} (64.00 MiB): the dos partition table and its 2 "
                f"partitions: {name}p1 (ext4 \"boot\"), {name}p2 (ext4)") in p.stdout
        sh("mount", p2, mnt)
        p, doc = check_json(conf)
        assert p.returncode == 78, p.stdout + p.stderr
        [t] = doc["targets"]
        assert t["ready"] is False
        assert f"/dev/{name}p2 is mounted on {mnt}" in t["refusals"][0]
        c = t["contents"]
        assert c["partition_table"] == "dos" and c["filesystem"] is None
        assert [(q["name"], q["filesystem"], q["label"], q["mounted_at"], q["size_bytes"])
                for q in c["partitions"]] == [
            (f"{name}p1", "ext4", "boot", None, 32768 * 512),
            (f"{name}p2", "ext4", None, str(mnt), (131072 - 34816) * 512)]
        assert f"{name}p2: ext4, mounted on {mnt}" in c["summary"]
    finally:
        subprocess.run(["umount", "-q", str(mnt)], capture_output=True)
        subprocess.run(["partx", "-d", loop.dev], capture_output=True)


def test_check_beside_the_running_daemon_names_it_and_writes_nothing(workdir):
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(db, workdir / "t.img", {
        "file_size": "16M", "sizes": "1M 2M", "fill": "no", "workload": "randwrite",
        "block_size": "4k", "queue_depth": "1", "amount": "1000x", "duration": "1s",
        "cycles": "0", "sample_interval": "0.25s"}))
    d = start_wearmond(conf)
    assert wait_for(lambda: query(db, "SELECT 1 FROM iterations WHERE status = 'running'"), 60)
    before = query(db, "SELECT count(*) AS n FROM iterations WHERE status = 'interrupted'")
    p, doc = check_json(conf)
    assert p.returncode == 0, p.stderr
    assert doc["database_in_use_by_pid"] == d.pid
    camp = doc["targets"][0]["campaign"]
    # as of now: the cycle under way would be resumed, its running row marked
    assert camp["state"] == "resumes" and camp["iterations_left_running"] >= 0
    p = check(conf)
    assert f"database {db} is in use by wearmond pid {d.pid}: the state above is as of now" \
        in p.stdout
    # --check marked nothing: the daemon's rows are as it left them
    assert query(db, "SELECT count(*) AS n FROM iterations WHERE status = 'interrupted'") \
        == before
    rc, _, err = stop(d)
    assert rc == 0, err
