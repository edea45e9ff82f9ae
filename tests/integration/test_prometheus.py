"""wearmond's metrics file with the real Prometheus tools: promtool checks
the file and tests the shipped alert rules; Debian's node_exporter reads
the file through its textfile collector and Debian's Prometheus scrapes it
(every second, rules loaded) while wearmond runs the simulated SSD through a
throughput crash; the test then asks Prometheus' HTTP API for the series,
the crash alert and every query of the shipped Grafana dashboard. Every
server listens on 127.0.0.1 only and is stopped in a finally block."""

import contextlib
import json
import re
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

import simssd_helper
from conftest import REPO, MiB, query, run_wearmond, sh, start_wearmond, wait_for, write_conf

RULES = REPO / "conf/prometheus/wearmon.rules.yml"
RULE_TESTS = REPO / "conf/prometheus/wearmon.rules.test.yml"
DASHBOARD = REPO / "conf/grafana/wearmon.json"

needs_promtool = pytest.mark.skipif(not shutil.which("promtool"), reason="promtool not installed")


def promtool(*args, stdin=None):
    return subprocess.run(["promtool", *map(str, args)], input=stdin, capture_output=True,
                          text=True, timeout=120)


def check_metrics(text):
    """promtool check metrics on text: (returncode, what it printed)."""
    p = promtool("check", "metrics", stdin=text)
    return p.returncode, p.stdout + p.stderr


# ---- promtool alone -----------------------------------------------------------

@needs_promtool
def test_rules_file_is_valid_and_its_tests_pass():
    p = promtool("check", "rules", RULES)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "SUCCESS: 9 rules found" in p.stdout
    p = promtool("test", "rules", RULE_TESTS)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "SUCCESS" in p.stdout


@needs_promtool
def test_rule_tests_would_catch_a_wrong_threshold(tmp_path):
    """The rule tests assert something: with the crash threshold moved to
    0.3 the 40% iteration no longer fires and promtool fails."""
    (tmp_path / "wearmon.rules.yml").write_text(
        RULES.read_text().replace("wearmon_last_iteration_baseline_ratio < 0.5",
                                  "wearmon_last_iteration_baseline_ratio < 0.3"))
    shutil.copy(RULE_TESTS, tmp_path / "t.yml")
    p = promtool("test", "rules", tmp_path / "t.yml")
    assert p.returncode != 0
    assert "WearmonThroughputCrash" in p.stdout + p.stderr


@needs_promtool
@pytest.mark.parametrize("change", [
    ("wearmon:endurance_days_left:lower < 30", "wearmon:endurance_days_left:lower < 20"),
    ("(wearmon_endurance_end_lower_timestamp_seconds - time()) / 86400",
     "(wearmon_endurance_end_timestamp_seconds - time()) / 86400"),
])
def test_endurance_rule_tests_would_catch_a_wrong_rule(tmp_path, change):
    """The endurance rules' tests assert something: a lead time of 20 days
    instead of 30, or a recording rule that reads another series, fails."""
    (tmp_path / "wearmon.rules.yml").write_text(RULES.read_text().replace(*change))
    shutil.copy(RULE_TESTS, tmp_path / "t.yml")
    p = promtool("test", "rules", tmp_path / "t.yml")
    assert p.returncode != 0
    assert "endurance" in (p.stdout + p.stderr).lower()


def file_target(db, path, metrics, **over):
    keys = {"device": path, "file_size": "64M", "sizes": "50% 100%", "fill": "no",
            "duration": "1s", "cycles": "2", "sample_interval": "0.5s"}
    keys.update(over)
    body = "\n".join(f"{k} = {v}" for k, v in keys.items())
    return f"[wearmon]\ndatabase = {db}\nmetrics_file = {metrics}\n\n[target f1]\n{body}\n"


def samples(text, name):
    """{frozenset(labels): value} of one metric in exposition text."""
    out = {}
    for line in text.splitlines():
        m = re.match(r'^' + re.escape(name) + r'(?:\{(.*)\})? (\S+)$', line)
        if m:
            labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1) or ""))
            out[labels] = float(m.group(2))
    return out


def watch_metrics_file(workdir, look, every, **over):
    """Run wearmond on a file target (file_target with over) writing its
    metrics file; while it runs, pass the file's text to look every `every`
    seconds (for at most 60 s). Returns (returncode, stderr, db, metrics)."""
    mdir = workdir / "textfile"
    mdir.mkdir()
    metrics = mdir / "wearmon.prom"
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", file_target(db, workdir / "f1.img", metrics, **over))
    proc = start_wearmond(conf)
    try:
        assert wait_for(metrics.exists, 30), "no metrics file"
        end = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < end:
            look(metrics.read_text())
            time.sleep(every)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, err, db, metrics


def test_every_short_measured_phase_shows_its_ratio(workdir):
    """Measured phases of 2 s, shorter than the 5-second rewrite: the file
    is also rewritten within 50 ms of a phase's first sample, so each phase
    of cycle 2 shows its live throughput and its ratio to cycle 1's
    baseline of the same size while it runs. A 0.5-second sample is
    reported when the next has ended, so that is the phase's last second
    only: a rewrite looked for once a second missed it."""
    ratio_seen, live_seen = set(), set()

    def look(text):
        cyc = list(samples(text, "wearmon_cycle").values())
        it = list(samples(text, "wearmon_iteration").values())
        where = (cyc[0], it[0]) if cyc and it else None
        if samples(text, "wearmon_throughput_baseline_ratio"):
            ratio_seen.add(where)
        if any(v > 0 for v in samples(text, "wearmon_throughput_bytes_per_second").values()):
            live_seen.add(where)

    rc, err, db, _ = watch_metrics_file(workdir, look, 0.05, duration="2s", amount="1000x")
    assert rc == 0, err
    rows = query(db, "SELECT cycle, iteration FROM history WHERE status = 'done'"
                     " ORDER BY cycle, iteration")
    assert [(r["cycle"], r["iteration"]) for r in rows] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    # every phase showed live figures; cycle 2's both showed a ratio
    assert live_seen >= {(1, 1), (1, 2), (2, 1), (2, 2)}, sorted(live_seen)
    assert ratio_seen >= {(2, 1), (2, 2)}, sorted(ratio_seen)


@needs_promtool
def test_metrics_file_during_and_after_a_run(workdir):
    """While wearmond runs, the file is rewritten (timestamps move), passes
    promtool, never leaves a temporary behind; at the end its figures are
    the database's."""
    seen, ends, problems = [], set(), []

    def look(text):
        if len(seen) % 4 == 0:
            rc, out = check_metrics(text)
            if rc or out:
                problems.append(out)
        seen.append(samples(text, "wearmon_metrics_updated_timestamp_seconds"))
        ends.update(samples(text, "wearmon_last_iteration_end_timestamp_seconds").values())

    rc, err, db, metrics = watch_metrics_file(workdir, look, 0.25, cycles=3, duration="2s",
                                              amount="1000x")
    assert rc == 0, err
    assert problems == []
    stamps = sorted({v for s in seen for v in s.values()})
    assert len(stamps) >= 2, "the file was not rewritten while the daemon ran"
    assert abs(stamps[-1] - time.time()) < 120
    # 6 iterations of ~2 s: the 5-second rewrites alone would show at most
    # 3 of their ends; the rewrite at each iteration end shows (nearly) all
    done = query(db, "SELECT count(*) AS n FROM iterations WHERE status = 'done'")[0]["n"]
    assert done == 6 and len(ends) >= 4, sorted(ends)
    assert sorted(p.name for p in metrics.parent.iterdir()) == ["wearmon.prom"]   # no temporaries
    text = metrics.read_text()
    rc, out = check_metrics(text)
    assert rc == 0 and out == "", out

    last = query(db, "SELECT mibps_avg, iops_avg, lat_p99_us, size_bytes FROM iterations"
                     " WHERE status = 'done' ORDER BY id DESC LIMIT 1")[0]
    base = {("target", "f1"), ("device", str(workdir / "f1.img")), ("serial", "")}
    lab = frozenset(base | {("workload", "randwrite")})
    assert samples(text, "wearmon_last_iteration_throughput_bytes_per_second")[lab] == \
        pytest.approx(last["mibps_avg"] * MiB, rel=1e-9)
    assert samples(text, "wearmon_last_iteration_iops")[lab] == pytest.approx(last["iops_avg"])
    assert samples(text, "wearmon_last_iteration_latency_p99_seconds")[lab] == \
        pytest.approx(last["lat_p99_us"] / 1e6)
    assert samples(text, "wearmon_cycle")[frozenset(base)] == 3
    assert samples(text, "wearmon_sizes_configured")[frozenset(base)] == 2
    states = samples(text, "wearmon_target_state")
    assert states[frozenset(base | {("state", "done")})] == 1
    assert states[frozenset(base | {("state", "running")})] == 0
    # the file's last word after a clean exit: stopped, and only that
    daemon = samples(text, "wearmon_daemon_state")
    assert daemon[frozenset({("state", "stopped")})] == 1
    assert daemon[frozenset({("state", "stopping")})] == 0
    assert daemon[frozenset({("state", "running")})] == 0
    host = query(db, "SELECT host_bytes_total FROM wear ORDER BY iteration_id DESC LIMIT 1")
    assert samples(text, "wearmon_host_written_bytes_total")[frozenset(base)] == \
        host[0]["host_bytes_total"]


def test_metrics_file_in_a_missing_directory_is_a_config_error(workdir):
    conf = write_conf(workdir / "w.conf", file_target(workdir / "w.db", workdir / "f1.img",
                                                      workdir / "nodir" / "w.prom"))
    p = run_wearmond(conf, timeout=30)
    assert p.returncode == 78, p.stderr
    assert f"{conf}:3: metrics_file: cannot write in {workdir}/nodir" in p.stderr


# ---- node_exporter and Prometheus --------------------------------------------

def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def wait_http(url, proc, what, timeout=60):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise AssertionError(f"{what} exited {proc.returncode}: {proc.stdout.read()}")
        try:
            http_get(url, timeout=2)
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"{what} did not answer {url} within {timeout}s")


@contextlib.contextmanager
def server(argv, ready_url, what, log):
    """A server process, stopped (TERM, then KILL) however the block ends."""
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, text=True)
    try:
        wait_http(ready_url, proc, what)
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


class Prom:
    """Prometheus' HTTP API (v1)."""

    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}/api/v1/"

    def _get(self, path, **params):
        body = json.loads(http_get(self.base + path + "?" + urllib.parse.urlencode(params)))
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr):
        return self._get("query", query=expr)["result"]

    def query_range(self, expr, start, end, step=1):
        return self._get("query_range", query=expr, start=start, end=end, step=step)["result"]

    def series(self, match, start, end):
        return self._get("series", **{"match[]": match}, start=start, end=end)


def dashboard_queries():
    """(panel title, expr) of every dashboard query, with the dashboard's
    variables as Grafana would fill them with "All"."""
    d = json.loads(DASHBOARD.read_text())
    subst = {"$instance": ".*", "$target": ".*", "$__rate_interval": "1m"}
    out = []
    for p in d["panels"]:
        for t in p["targets"]:
            expr = t["expr"]
            for k, v in subst.items():
                expr = expr.replace(k, v)
            out.append((p["title"], expr))
    for a in d["annotations"]["list"]:
        expr = a["expr"]
        for k, v in subst.items():
            expr = expr.replace(k, v)
        out.append(("annotation " + a["name"], expr))
    return out


DRIVE = dict(capacity="32M", page="4k", erase_block="128k", spare=7, channels=4,
             t_prog="800us", t_read="50us", t_erase="2ms", cache="512k")


def sim_conf(db, dev, metrics):
    keys = {"device": dev, "allow_destroy": "yes", "sizes": "50% 100%", "fill": "yes",
            "fill_block_size": "128k", "fill_queue_depth": "8", "workload": "randwrite",
            "block_size": "4k", "queue_depth": "16", "duration": "3s",
            "sample_interval": "0.5s", "cycles": "2", "between_cycles": "none"}
    body = "\n".join(f"{k} = {v}" for k, v in keys.items())
    return f"[wearmon]\ndatabase = {db}\nmetrics_file = {metrics}\n\n[target sim]\n{body}\n"


def missing_servers():
    for tool in ("prometheus", "prometheus-node-exporter", "promtool"):
        if not shutil.which(tool):
            return f"{tool} not installed"
    return simssd_helper.missing_prerequisites()


@pytest.mark.skipif(missing_servers() is not None, reason=str(missing_servers()))
def test_prometheus_scrapes_wearmond_through_a_crash(workdir):
    textdir = workdir / "textfile"
    textdir.mkdir()
    tsdb = workdir / "tsdb"
    ne_port, prom_port = free_port(), free_port()
    prom_conf = workdir / "prometheus.yml"
    prom_conf.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        f"rule_files:\n  - {RULES}\n"
        "scrape_configs:\n  - job_name: node\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{ne_port}']\n")
    log = open(workdir / "servers.log", "w")
    ne_argv = ["prometheus-node-exporter", "--collector.disable-defaults",
               "--collector.textfile", f"--collector.textfile.directory={textdir}",
               f"--web.listen-address=127.0.0.1:{ne_port}"]
    prom_argv = ["prometheus", f"--config.file={prom_conf}", f"--storage.tsdb.path={tsdb}",
                 f"--web.listen-address=127.0.0.1:{prom_port}"]
    t0 = time.time()
    try:
        with simssd_helper.sim_drive(**DRIVE) as d, \
                server(ne_argv, f"http://127.0.0.1:{ne_port}/metrics", "node_exporter", log), \
                server(prom_argv, f"http://127.0.0.1:{prom_port}/-/ready", "prometheus", log):
            db = workdir / "w.db"
            conf = write_conf(workdir / "w.conf", sim_conf(db, d.loop, textdir / "wearmon.prom"))
            p = run_wearmond(conf, timeout=600)
            assert p.returncode == 0, p.stderr
            dev = d.loop
            prom = Prom(prom_port)
            # the final file (target done) has been scraped
            assert wait_for(lambda: prom.query(
                'wearmon_target_state{target="sim",state="done"} == 1'), 30, step=0.5)
            check_prometheus(prom, db, dev, t0)
            # the simulated drive's file (NAND bytes, write amplification) lints clean
            text = (textdir / "wearmon.prom").read_text()
            assert "wearmon_drive_nand_written_bytes_total{" in text
            assert check_metrics(text) == (0, "")
    finally:
        log.close()


def check_prometheus(prom, db, dev, t0):
    now = time.time()
    # node_exporter read the file without complaint
    err = prom.query("node_textfile_scrape_error")
    assert err and float(err[0]["value"][1]) == 0

    # the throughput series, with the target's labels
    for name in ("wearmon_throughput_bytes_per_second",
                 "wearmon_last_iteration_throughput_bytes_per_second"):
        series = prom.series(name, t0, now)
        assert series, f"no {name}"
        for s in series:
            assert s["target"] == "sim" and s["device"] == dev
            assert s["workload"] == "randwrite" and s["job"] == "node"

    # cycle 2's half size crashed (see test_sim_e2e): the ratio went under 0.5
    # and the shipped rule fired
    low = prom.query(f'min_over_time(wearmon_last_iteration_baseline_ratio[{int(now - t0) + 60}s])')
    crash = query(db, "SELECT ratio FROM degradation WHERE cycle = 2 ORDER BY ratio LIMIT 1")
    assert crash and crash[0]["ratio"] < 0.5
    assert low and float(low[0]["value"][1]) == pytest.approx(crash[0]["ratio"], rel=1e-6)
    fired = prom.query('max_over_time(ALERTS{alertname="WearmonThroughputCrash",'
                       f'alertstate="firing"}}[{int(now - t0) + 60}s])')
    assert fired, "WearmonThroughputCrash never fired"
    assert fired[0]["metric"]["target"] == "sim" and fired[0]["metric"]["device"] == dev
    # wearmond's own crash alert is counted too
    kinds = prom.query('wearmon_alerts_total{kind="throughput-crash"}')
    assert kinds and float(kinds[0]["value"][1]) >= 1
    # cycle numbers 1 and 2 were both seen
    cycles = prom.query_range('wearmon_cycle{target="sim"}', t0, now, step=1)
    assert {float(v) for _, v in cycles[0]["values"]} >= {1.0, 2.0}

    # every dashboard panel (and annotation) returns series over the run
    empty = []
    by_panel = {}
    for title, expr in dashboard_queries():
        got = prom.query_range(expr, t0, now, step=1)
        by_panel.setdefault(title, []).append(bool(got))
        if not got:
            empty.append(f"{title}: {expr}")
    assert all(any(v) for v in by_panel.values()), f"panels without data: {empty}"
    # the simulated drive reports no life used, spare or temperature: only
    # those queries may come back empty
    assert all(re.search(r"life_used|spare|temperature", e) for e in empty), empty
    print(f"crash ratio {crash[0]['ratio']:.3f}, alert {fired[0]['metric']['alertname']}, "
          f"{len(by_panel)} panels/annotations with data, empty queries: {len(empty)}")


STORED = ("wearmon_last_iteration_", "wearmon_host_written_bytes_total",
          "wearmon_overprovisioning_", "wearmon_drive_", "wearmon_io_errors_total",
          "wearmon_verify_errors_total", "wearmon_alerts_total")


def stored_lines(text):
    return sorted(line for line in text.splitlines() if line.startswith(STORED))


def test_figures_kept_in_memory_equal_the_databases(workdir):
    """Run 2 reads each target's stored figures once at start and keeps them
    up to date as it writes rows; run 3 has nothing left to do and only reads
    them from the database: both files show the same stored figures."""
    mdir = workdir / "textfile"
    mdir.mkdir()
    metrics = mdir / "wearmon.prom"
    db = workdir / "w.db"

    def run(cycles):
        conf = write_conf(workdir / "w.conf",
                          file_target(db, workdir / "f1.img", metrics, cycles=str(cycles)))
        p = run_wearmond(conf, timeout=300)
        assert p.returncode == 0, p.stderr
        return p.stderr, metrics.read_text()

    run(2)
    # alerts from before the start are seeded, those during it counted
    sh("sqlite3", db, "INSERT INTO events (target_id, severity, kind, message) VALUES"
       " (1, 'warning', 'throughput-crash', 'before'), (1, 'notice', 'zz-kind', 'before')")
    _, kept = run(4)
    err, fresh = run(4)
    assert "nothing to do" in err, err
    assert query(db, "SELECT count(*) AS n FROM iterations WHERE status = 'done'") == [{"n": 8}]
    assert stored_lines(kept) == stored_lines(fresh)
    assert any(line.startswith("wearmon_last_iteration_end_timestamp_seconds")
               for line in stored_lines(kept)), kept
    assert any('kind="zz-kind"' in line for line in stored_lines(kept)), kept
