"""Bash completion of wearmon and wearmond (tools/wearmon/wearmon.bash): a
bash that sources bash-completion and the file runs the completion
functions on COMP_WORDS/COMP_CWORD and prints the candidates. Also
`wearmon history --sort`, whose column names it completes, and `make
install-completion`, which puts the file where bash-completion looks."""

import json
import shlex
import subprocess
from pathlib import Path

from conftest import REPO, WEARMON, run_wearmon, two_cycle_file_db, write_conf

SCRIPT = REPO / "tools" / "wearmon" / "wearmon.bash"
BASH_COMPLETION = Path("/usr/share/bash-completion/bash_completion")


def complete(func, words, home=None):
    """The candidates func gives with the cursor on the last of words."""
    arr = " ".join(shlex.quote(w) for w in words)
    prog = (f"source {BASH_COMPLETION}\nsource {SCRIPT}\n"
            f"COMP_WORDS=({arr}); COMP_CWORD={len(words) - 1}\n"
            f"COMP_LINE={shlex.quote(' '.join(words))}; COMP_POINT=${{#COMP_LINE}}\n"
            f"{func}\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n")
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", prog], capture_output=True,
                       text=True, timeout=60, cwd=home)
    assert p.returncode == 0, p.stderr
    return sorted(x for x in p.stdout.splitlines() if x)


def test_subcommands_and_options():
    w = str(WEARMON)
    assert complete("_wearmon", [w, "h"]) == ["history"]
    assert complete("_wearmon", [w, "s"]) == ["show", "status"]
    assert complete("_wearmon", [w, "-"]) == ["--database", "--help", "--version", "-V", "-d",
                                              "-h"]
    assert complete("_wearmon", [w, "-d", "x.db", "history", "--"]) == [
        "--cycle", "--format", "--since", "--sort", "--target"]
    assert complete("_wearmon", [w, "status", "--format", ""]) == ["json", "table"]
    assert complete("_wearmon", [w, "history", "--format", "c"]) == ["csv"]
    assert complete("_wearmon", [w, "plot", "--kind", "s"]) == ["samples", "sizes"]
    assert complete("_wearmond", ["wearmond", "--c"]) == ["--check", "--config"]
    assert complete("_wearmond", ["wearmond", "--check", "--j"]) == ["--journal", "--json"]


def test_target_names_from_the_config_and_the_database(workdir):
    conf = write_conf(workdir / "w.conf",
                      "[wearmon]\ndatabase = /x.db\n\n[target lab1]\ndevice = /a\n\n"
                      "[ target  spare-2 ]\ndevice = /b\n\n[target lab3]\ndevice = /c\n")
    assert complete("_wearmond", ["wearmond", "-c", str(conf), "--new-campaign", ""]) == [
        "all", "lab1", "lab3", "spare-2"]
    assert complete("_wearmond", ["wearmond", f"--config={conf}", "--new-campaign", "l"]) == [
        "lab1", "lab3"]
    db = two_cycle_file_db(workdir)
    assert complete("_wearmon", [str(WEARMON), "-d", str(db), "status", "--target", ""]) == \
        ["f1"]
    tables = complete("_wearmon", [str(WEARMON), "-d", str(db), "export", "cyc"])
    assert tables == ["cycle_summary", "cycles"]


def test_sort_completes_the_history_columns(workdir):
    db = two_cycle_file_db(workdir)
    header = run_wearmon("history", "--format", "csv", db=db, check=0).stdout.splitlines()[0]
    cols = complete("_wearmon", [str(WEARMON), "-d", str(db), "history", "--sort", ""])
    assert {c for c in cols if not c.startswith("-")} == set(header.split(","))
    assert complete("_wearmon", [str(WEARMON), "-d", str(db), "history", "--sort", "-mibps_a"]) \
        == ["-mibps_avg"]


def test_history_sort_orders_by_a_column(workdir):
    db = two_cycle_file_db(workdir)
    rows = json.loads(run_wearmon("history", "--format", "json", "--sort", "-mibps_avg",
                                  db=db, check=0).stdout)
    rates = [r["mibps_avg"] for r in rows if r["mibps_avg"] is not None]
    assert len(rates) >= 4 and rates == sorted(rates, reverse=True)
    rows = json.loads(run_wearmon("history", "--format", "json", "--sort", "size_bytes",
                                  db=db, check=0).stdout)
    sizes = [r["size_bytes"] for r in rows]
    assert sizes == sorted(sizes)
    # equal sizes keep their cycle order
    assert [r["cycle"] for r in rows if r["size_bytes"] == sizes[0]] == [1, 2]
    p = run_wearmon("history", "--sort", "nope", db=db, check=2)
    assert 'history: --sort: history has no column "nope"; it has id target cycle' in p.stderr


def test_make_install_completion_puts_it_where_bash_completion_looks(workdir):
    dest = workdir / "dest"
    p = subprocess.run(["make", "--no-print-directory", "-C", str(REPO), "install-completion",
                        f"DESTDIR={dest}"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    where = subprocess.run(["pkg-config", "--variable=completionsdir", "bash-completion"],
                           capture_output=True, text=True).stdout.strip()
    where = where or "/usr/share/bash-completion/completions"
    for name in ("wearmon", "wearmond"):
        f = dest / where.lstrip("/") / name
        assert f.read_text() == SCRIPT.read_text()
        assert oct(f.stat().st_mode & 0o777) == "0o644"
