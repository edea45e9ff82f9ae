"""bench_scale.py: the year-scale section of `make bench`. It
builds a history of TARGETS x DAYS with build/scalegen (8 x 365 unless
BENCH_SCALE_TARGETS / BENCH_SCALE_DAYS say otherwise), then prints the
size per target-day, wearmond's start-up to READY=1 on it (null engine),
the time, peak RSS and SQLite steps of each CLI read and README query, a
merge of 10 machine-months and the same merge again, each against the goal
of a year-scale history; and growth figures that do not depend on the machine: the
SQLite steps of every read at 2 x 32 days against 2 x 96 days. It asserts
nothing. tools/bench/README.md, "Year scale", describes the method."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scalegen"))
import scale  # noqa: E402

GIB, MIB = 1 << 30, 1 << 20
# The two histories of the growth figures, and a machine-month's days:
# BENCH_SCALE_GROWTH and BENCH_SCALE_MONTH_DAYS shorten them for a smoke
# test (tests/integration/test_bench.py).
GROWTH_DAYS = tuple(int(x) for x in os.environ.get("BENCH_SCALE_GROWTH", "32 96").split())
MONTH_DAYS = int(os.environ.get("BENCH_SCALE_MONTH_DAYS", "30"))
MERGE_INPUTS = 10
# The year-scale goals: seconds (or bytes for RSS) per read.
GOAL_SECONDS = {"status": 0.3, "history": 0.2, "show": 0.2, "alerts": 0.2, "plot": 2.0,
                "report": 15.0, "readme": 1.0, "ready": 5.0, "merge": 60.0, "remerge": 10.0}
GOAL_EXPORT_RSS = 128 * MIB
GOAL_YEAR_8 = 4 * GIB  # 8 targets x 365 days
# A read or query still running after this is stopped and shown as "> N s"
# ("README.md query 1", the first ```sql block of README.md in
# scale.readme_queries(), was projected at 51 min on a year).
CAP = int(os.environ.get("BENCH_SCALE_CAP", "600"))
# The year's history: 1-second samples kept for this many days (the
# daemon's sample_retention), the older ones rolled up into minutes as the
# daemon's retention job leaves them; ssd1 written through the daemon's
# write path, the other targets copied from it (tools/scalegen/README.md).
RETENTION_DAYS = 30
SCALEGEN_YEAR = ("--retention", str(RETENTION_DAYS), "--replicate")
# Room to generate in tmpfs (one sync per iteration costs little there)
# before the file moves to its directory: the year x 8 needs about 1.6 GiB.
SHM = Path("/dev/shm")


def verdict(ok):
    return "goal met" if ok else "goal missed"


def read_goal(name):
    """The goal in seconds of a CLI read by its name (scale.cli_reads)."""
    word = name.split()[0]
    return GOAL_SECONDS.get(word, GOAL_SECONDS["plot"])


def wait_ready(sock, proc, timeout):
    """Seconds until READY=1 arrives on sock, or None (exit or timeout)."""
    t0 = time.monotonic()
    sock.settimeout(0.2)
    while time.monotonic() - t0 < timeout:
        try:
            msg = sock.recv(4096).decode(errors="replace")
        except socket.timeout:
            if proc.poll() is not None:
                return None
            continue
        if "READY=1" in msg.split("\n"):
            return time.monotonic() - t0
    return None


def startup(build, db, work):
    """wearmond's start-up to READY=1 on db (a null-engine file target of
    its own), then a stop. Returns seconds or None."""
    conf = work / "startup.conf"
    # the target's file outside /dev (a path in /dev/shm reads as a device)
    img = Path(tempfile.mkdtemp(prefix="wearmon-bench-startup-", dir="/var/tmp"))
    try:
        conf.write_text(f"[wearmon]\ndatabase = {db}\n\n[target startup]\n"
                        f"device = {img}/startup.img\nfile_size = 64M\nioengine = null\n"
                        "sizes = 100%\nfill = no\nduration = 1s\ncycles = 0\n")
        # in the short directory: a socket's path has at most 107 bytes, and
        # work may be deep (make check's TMPDIR)
        path = img / "notify.sock"
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.bind(str(path))
            return run_to_ready(build, conf, sock, path)
    finally:
        shutil.rmtree(img, ignore_errors=True)


def run_to_ready(build, conf, sock, path):
    """wearmond on conf, told to notify path (bound by sock), until READY=1;
    stopped on every way out. Returns seconds or None."""
    env = dict(os.environ, NOTIFY_SOCKET=str(path))
    proc = subprocess.Popen([str(build / "wearmond"), "--foreground", "-c", str(conf)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        return wait_ready(sock, proc, 1800)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def print_reads(build, db, work, target):
    """Every CLI read of the year-scale goals on one target, against its goal. Returns
    {read: SQLite steps}."""
    steps = {}
    print(f"  {'read':<36} {'seconds':>8} {'goal':>6} {'peak RSS':>9} {'VM steps':>13}")
    for name, argv in scale.cli_reads(db, work, target):
        r = scale.run_traced(build, db, argv, timeout=CAP)
        steps[name] = r["vm"]
        goal = read_goal(name)
        state = verdict(r["seconds"] <= goal) if r["rc"] == 0 else f"exit {r['rc']}"
        if r["rc"] == 124:
            state = f"stopped after {CAP} s: goal missed"
        print(f"  {name:<36} {r['seconds']:>8.2f} {goal:>6.1f} {r['rss'] / MIB:>6.0f} MiB "
              f"{r['vm']:>13} {state}")
        sys.stdout.flush()
    export_argv = ["export", "samples", "--target", target]
    r = scale.run_traced(build, db, export_argv, mem_limit=8 * GIB, timeout=CAP)
    what = " ".join(export_argv)
    state = (verdict(r["rss"] <= GOAL_EXPORT_RSS) if r["rc"] == 0
             else f"exit {r['rc']} (address space limited to 8 GiB)")
    print(f"  {what:<36} {r['seconds']:>8.2f} {'':>6} {r['rss'] / MIB:>6.0f} MiB "
          f"{r['vm']:>13} {r['out'] / MIB:.0f} MiB out, goal RSS <= 128 MiB: {state}")
    return steps


def print_readme(db):
    """Every README query, against its goal. Returns {query: SQLite steps}."""
    steps = {}
    print(f"  {'README query':<36} {'seconds':>8} {'goal':>6} {'rows':>9} {'VM steps':>13}")
    for where, sql in scale.readme_queries():
        secs, n, rows = scale.query_run(db, sql, timeout=CAP)
        steps[where] = n or 0
        if secs is None:
            print(f"  {where:<36} {'> ' + str(CAP):>8} {GOAL_SECONDS['readme']:>6.1f} "
                  f"{'':>9} {'?':>13} stopped: goal missed")
            continue
        print(f"  {where:<36} {secs:>8.2f} {GOAL_SECONDS['readme']:>6.1f} {rows:>9} {n:>13} "
              f"{verdict(secs <= GOAL_SECONDS['readme'])}")
        sys.stdout.flush()
    return steps


def merge(build, inputs, out):
    """Seconds of `wearmon merge -o out` over inputs, each renamed to its
    own host; None when it failed (printed)."""
    argv = [str(build / "wearmon"), "merge", "-o", str(out)]
    for k, path in enumerate(inputs):
        argv += [str(path), "--rename", f"{path}=machine{k}"]
    t = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"  merge failed ({p.returncode}): {p.stderr.strip()[-300:]}")
        return None
    return time.monotonic() - t


def print_merge(build, work):
    """A merge of 10 machine-months (one generated month copied under 10
    host names), then the same merge again."""
    month = work / "month0.db"
    secs, _ = scale.generate(build, 1, MONTH_DAYS, month, seed=7)
    scale.checkpoint(month)
    inputs = [month]
    for k in range(1, MERGE_INPUTS):
        inputs.append(work / f"month{k}.db")
        shutil.copyfile(month, inputs[-1])
    size = sum(os.stat(p).st_size for p in inputs)
    out = work / "fleet.db"
    first = merge(build, inputs, out)
    again = merge(build, inputs, out) if first is not None else None
    for what, s, goal in (("merge of", first, "merge"), ("the same merge again of", again,
                                                        "remerge")):
        if s is not None:
            print(f"  {what} {MERGE_INPUTS} machine-months (1 target x {MONTH_DAYS} days each, "
                  f"{size / GIB:.2f} GiB in all): {s:.1f} s (goal <= "
                  f"{GOAL_SECONDS[goal]:.0f} s) {verdict(s <= GOAL_SECONDS[goal])}")
    for p in [*inputs, out]:
        scale_remove(p)


def scale_remove(db):
    for ext in ("", "-wal", "-shm", ".lock"):
        Path(str(db) + ext).unlink(missing_ok=True)


def print_growth(build, work, have):
    """SQLite steps of every read at 2 x 32 days and 2 x 96 days: the
    figures any machine gives alike. have: {days: {read: steps}} measured
    already on a history of 2 targets."""
    steps, dbs = {}, {}
    for days in GROWTH_DAYS:
        if days in have:
            for name, n in have[days].items():
                steps.setdefault(name, []).append(n)
            continue
        db = dbs[days] = work / f"growth{days}.db"
        scale.generate(build, 2, days, db)
        scale.checkpoint(db)
        for name, argv in scale.cli_reads(db, work, "ssd1"):
            steps.setdefault(name, []).append(
                scale.run_traced(build, db, argv, timeout=CAP)["vm"])
        for where, sql in scale.readme_queries():
            steps.setdefault(where, []).append(scale.query_steps(db, sql, timeout=CAP)[1] or 0)
    a, b = GROWTH_DAYS
    print(f"growth, SQLite virtual machine steps at 2 targets x {a} days -> x {b} days "
          f"(history {b / a:.0f}x: 1x is constant, {b / a:.0f}x linear, "
          f"{(b / a) ** 2:.0f}x a square):")
    for name, (x, y) in steps.items():
        print(f"  {name:<36} {x:>13} -> {y:>13} = {y / max(1, x):6.1f}x")
    for db in dbs.values():
        scale_remove(db)


def generate_year(build, targets, days, db):
    """The history of the section: in /dev/shm when it has room for the
    size at 1-second samples, then moved next to db; else in place.
    Returns scalegen's line."""
    need = targets * min(days, RETENTION_DAYS + 1) * 5 * MIB + targets * days * MIB
    via = SHM if SHM.is_dir() and shutil.disk_usage(SHM).free > 2 * need else None
    tmp = Path(tempfile.mkdtemp(prefix="wearmon-bench-scale-", dir=via)) if via else None
    try:
        out = tmp / db.name if tmp else db
        _, line = scale.generate(build, targets, days, out, extra=SCALEGEN_YEAR)
        scale.checkpoint(out)
        if tmp:
            shutil.move(str(out), str(db))
        return line + (f" (built in {via}, then moved)" if tmp else "")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def run(build, targets, days, where):
    """The whole section; where: the directory for its databases."""
    build = Path(build).resolve()
    work = Path(tempfile.mkdtemp(prefix="wearmon-bench-scale-", dir=where))
    try:
        db = work / "scale.db"
        print(f"year scale: {targets} targets x {days} days built by build/scalegen "
              f"{' '.join(SCALEGEN_YEAR)} in {work} (tools/scalegen/README.md)")
        sys.stdout.flush()
        line = generate_year(build, targets, days, db)
        print(f"  {line.removeprefix('scalegen: ')}")
        per = scale.size_per_target_day(db, targets, days)
        year8 = per * MIB * 8 * 365
        print(f"  size: {os.stat(db).st_size / GIB:.2f} GiB = {per:.2f} MiB per target-day; "
              f"a year x 8 targets {year8 / GIB:.2f} GiB (goal <= 4 GiB) "
              f"{verdict(year8 <= GOAL_YEAR_8)}; x 24 targets {3 * year8 / GIB:.2f} GiB "
              f"(goal <= 12 GiB) {verdict(3 * year8 <= 3 * GOAL_YEAR_8)}")
        sys.stdout.flush()
        steps = print_reads(build, db, work, "ssd1")
        steps.update(print_readme(db))
        print_growth(build, work, {days: steps} if targets == 2 else {})
        ready = startup(build, db, work)
        print(f"  wearmond start-up to READY=1 on it (null engine): "
              + (f"{ready:.1f} s (goal <= 5 s) {verdict(ready <= GOAL_SECONDS['ready'])}"
                 if ready is not None else "no READY=1 (exited or 30 min)"))
        scale_remove(db)
        print_merge(build, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
