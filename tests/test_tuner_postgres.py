"""Shared studies on a real PostgreSQL server: the schema race, the driver, no password shown.

The server is started from the Debian ``postgresql`` package's binaries
(``/usr/lib/postgresql/*/bin``) in a temporary directory on 127.0.0.1; the tests that
need it skip, with the reason, where there is none or it cannot start.
"""

import glob
import multiprocessing
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid

import optuna
import pytest
from gswitch.tuner.storage import open_storage, redact_url
from test_tuner import _env, _finished

from gswitch.cli import main
from gswitch.errors import InvalidInput

PASSWORD = "s3cret-Pw"
GRAPH = "rmat:8,seed=4"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _server_bin() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


@pytest.fixture(scope="module")
def postgres_server():
    """A PostgreSQL server on 127.0.0.1 (trust authentication, superuser ``gswitch``) in a
    temporary directory; yields ``(port, base URL with a password)``; stopped at the end.
    """
    pytest.importorskip("psycopg", reason="needs psycopg (pip install 'gswitch[postgres]')")
    bindir = _server_bin()
    if bindir is None:
        pytest.skip("no PostgreSQL server binaries (apt-get install postgresql)")
    prefix: list[str] = []
    root = tempfile.mkdtemp(prefix="gswitch-pg-")
    if os.geteuid() == 0:  # postgres refuses to run as root: run it as the postgres user
        import pwd

        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(root, ignore_errors=True)
            pytest.skip("running as root and there is no postgres user to run the server")
        os.chown(root, user.pw_uid, user.pw_gid)
        prefix = (["runuser", "-u", "postgres", "--"] if shutil.which("runuser")
                  else ["su", "postgres", "-s", "/bin/sh", "-c"])
    data = os.path.join(root, "data")
    log = os.path.join(root, "server.log")
    port = _free_port()

    def as_server(args: list[str]) -> subprocess.CompletedProcess:
        cmd = prefix + [" ".join(args)] if prefix[:1] == ["su"] else prefix + args
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60)

    started = False
    try:
        init = as_server([f"{bindir}/initdb", "-D", data, "-U", "gswitch", "--auth=trust",
                          "-E", "UTF8", "--no-sync"])
        if init.returncode != 0:
            pytest.skip(f"initdb failed: {(init.stderr or init.stdout).strip()[-300:]}")
        start = as_server([f"{bindir}/pg_ctl", "-D", data, "-l", log, "-w", "-t", "30", "-o",
                           f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off",
                           "start"])
        if start.returncode != 0:
            text = open(log).read()[-300:] if os.path.exists(log) else start.stderr
            pytest.skip(f"PostgreSQL server did not start: {text.strip()}")
        started = True
        yield port, f"postgresql://gswitch:{PASSWORD}@127.0.0.1:{port}"
    finally:
        if started:
            as_server([f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"])
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def fresh_db(postgres_server):
    """The URL (with a password, which trust authentication ignores) of a new empty
    database."""
    import psycopg

    port, base = postgres_server
    name = f"studies_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(host="127.0.0.1", port=port, user="gswitch", dbname="postgres",
                         autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{base}/{name}"


def _open_at_once(url, barrier):
    import sqlalchemy  # noqa: F401 - imported before the barrier, so all connect at once

    open_storage("sqlite://")  # imports optuna and the RDB storage
    barrier.wait(timeout=60)
    open_storage(url)


def test_processes_opening_a_fresh_database_at_once_all_succeed(fresh_db):
    """Four processes creating the schema of one empty database at the same moment."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(4)
    procs = [ctx.Process(target=_open_at_once, args=(fresh_db, barrier)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    assert open_storage(fresh_db).get_all_studies() == []


@pytest.mark.slow  # the journal two-process study runs in the test command; .ci/run runs this
def test_two_tune_processes_share_one_study_on_a_fresh_database(fresh_db, tmp_path):
    """Two ``gswitch tune`` started together on an empty database both finish; the study
    holds every trial once, ``gswitch report`` reads it, and no output shows the password.
    """
    trials = 10
    cmd = [sys.executable, "-m", "gswitch", "tune", "bfs", "--generate", GRAPH, "--backend",
           "cpu", "--storage", fresh_db, "--trials", str(trials), "--seed", "0",
           "--no-progress"]
    procs = [subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert PASSWORD not in out + err
        assert "gswitch:***@127.0.0.1" in out
    finished = _finished(fresh_db)
    assert trials <= len(finished) <= trials + 2
    assert len({t.user_attrs["pid"] for t in finished}) == 2
    store = open_storage(fresh_db)
    (summary,) = store.get_all_studies()
    every = optuna.load_study(study_name=summary.study_name, storage=store).get_trials()
    assert sorted(t.number for t in every) == list(range(len(every)))  # none lost, none twice
    assert len({t._trial_id for t in every}) == len(every)
    assert not [t for t in every if t.state.name == "RUNNING"]
    report = subprocess.run([sys.executable, "-m", "gswitch", "report", "bfs", "--generate",
                             GRAPH, "--backend", "cpu", "--storage", fresh_db, "--out",
                             str(tmp_path / "rep")], env=_env(), capture_output=True,
                            text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    md = (tmp_path / "rep" / "summary.md").read_text()
    assert summary.study_name in md and PASSWORD not in md + report.stdout + report.stderr


def test_unreachable_server_is_one_line_without_the_password(capsys):
    """Nothing listens on the port: one line naming the URL with ``***``, exit status 2."""
    pytest.importorskip("psycopg", reason="needs psycopg (pip install 'gswitch[postgres]')")
    url = f"postgresql://alice:{PASSWORD}@127.0.0.1:{_free_port()}/studies"
    code = main(["tune", "bfs", "--generate", GRAPH, "--backend", "cpu", "--storage", url,
                 "--trials", "2", "--no-progress"])
    cap = capsys.readouterr()
    assert code == 2
    assert PASSWORD not in cap.out + cap.err
    lines = cap.err.strip().splitlines()
    assert len(lines) == 1, cap.err
    assert "cannot open storage 'postgresql://alice:***@127.0.0.1:" in lines[0]


@pytest.mark.parametrize("password", ["Xq7@Zw9", "k3y@4@Zz9"])
def test_a_bare_at_in_the_password_is_refused_before_any_driver(password):
    """A driver splits at the first '@' and would print the rest of the password as the
    host; the URL is refused first, with the fix, and no part of the password shows."""
    url = f"postgresql://alice:{password}@127.0.0.1:1/db"
    with pytest.raises(InvalidInput) as info:
        open_storage(url)
    message = str(info.value)
    assert "%40" in message and "postgresql://alice:***@127.0.0.1:1/db" in message
    assert all(part not in message for part in password.split("@") if len(part) > 1)


def test_missing_psycopg_is_one_line_with_the_fix(monkeypatch):
    """Without psycopg (or psycopg2) a plain postgresql:// URL says what to install."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("psycopg", "psycopg2")
                        else real(name, *a))
    with pytest.raises(InvalidInput) as info:
        open_storage(f"postgresql://bob:{PASSWORD}@db.example/studies")
    message = str(info.value)
    assert PASSWORD not in message and "postgresql://bob:***@db.example/studies" in message
    assert 'pip install "gswitch[postgres]"' in message and "psycopg" in message


@pytest.mark.parametrize("url, shown", [
    ("postgresql://user:secret@host/db", "postgresql://user:***@host/db"),
    ("postgresql+psycopg://user:p%40ss:w@host:5432/db", "postgresql+psycopg://user:***@host:5432/db"),
    ("mysql://user:a@b@host/db", "mysql://user:***@host/db"),
    ("postgresql://host/db?user=u&password=secret&sslmode=require",
     "postgresql://host/db?user=u&password=***&sslmode=require"),
    ("postgresql://user@host/db", "postgresql://user@host/db"),
    ("sqlite:////tmp/a:b@c.db", "sqlite:////tmp/a:b@c.db"),
    ("journal:///tmp/studies.journal", "journal:///tmp/studies.journal"),
])
def test_redact_url_hides_only_the_password(url, shown):
    assert redact_url(url) == shown
