"""The isolation layers one by one: what each level lets a worker see and do.

A probe submission reports, from inside a real worker, what it can see; the
tests then say what each level must hide. Levels that do not work on this
machine are skipped with the reason (CI installs bubblewrap, so they run there).
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from grader import sandbox
from grader.worker_client import OUTPUT_CAP_BYTES, Limits, Worker

KIT = Path(__file__).resolve().parent.parent
LIMITS = Limits(call_seconds=2, load_seconds=10, budget_seconds=30)
LINUX = sys.platform.startswith("linux")
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_linux = pytest.mark.skipif(not LINUX, reason="namespaces, setpriv, prctl and /proc are Linux-only")

PROBE = r'''
import json, os, socket, sys

def can(action):
    try:
        action()
        return True
    except (OSError, ValueError):
        return False

def status(key):
    with open("/proc/self/status") as lines:
        return next(line.split()[1] for line in lines if line.startswith(key + ":"))

def write(path):
    with open(path, "w") as out:
        out.write("probe")

def connect():
    socket.create_connection(("127.0.0.1", PORT), timeout=1).close()

limits = {}
try:
    import resource
    for name in ("RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_NOFILE", "RLIMIT_FSIZE", "RLIMIT_CORE"):
        limits[name] = resource.getrlimit(getattr(resource, name))[0]
except ImportError:
    pass
tmp = os.statvfs("/tmp")
facts = {
    "uid": os.getuid(),
    "environment": sorted(os.environ),
    "sees": {path: os.path.exists(path) for path in PATHS},
    "fds": {fd: os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
            if can(lambda: os.readlink(f"/proc/self/fd/{fd}"))},
    "write_tmp": can(lambda: write("/tmp/probe")),
    "tmp_bytes": tmp.f_blocks * tmp.f_frsize,
    "write_usr": can(lambda: write("/usr/probe")),
    "write_kit": can(lambda: write(os.path.join(KIT, "probe-" + MARK))),
    "connect": can(connect),
    "signal_parent": can(lambda: os.kill(os.getppid(), 0)),
    "pids": len([p for p in os.listdir("/proc") if p.isdigit()]),
    "no_new_privs": status("NoNewPrivs"),
    "capabilities": status("CapEff"),
    "limits": limits,
    "usr_local": sorted(os.listdir("/usr/local")) if os.path.isdir("/usr/local") else None,
}
print("FACTS " + json.dumps(facts))
'''


def isolation_or_skip(level):
    try:
        return sandbox.detect(level)
    except sandbox.IsolationUnavailable as error:
        pytest.skip(f"the {level} level is not available on this machine: {error}")


def write_submission(tmp_path, source):
    """The submission as the grader lays it out: a folder of its own that another
    user may read (pytest's tmp_path is private to its user, so not there)."""
    folder = Path(tempfile.mkdtemp(prefix="grader-test-"))
    CLEANUP.append(folder)
    path = folder / "tiny_autograd.py"
    path.write_text(source, encoding="utf-8")
    os.chmod(folder, 0o755)
    os.chmod(path, 0o644)
    return path


CLEANUP = []


@pytest.fixture(autouse=True)
def _remove_submissions():
    yield
    while CLEANUP:
        shutil.rmtree(CLEANUP.pop(), ignore_errors=True)


def probe(level, tmp_path):
    """What a worker at `level` sees, reported from inside it."""
    isolation = isolation_or_skip(level)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    mark = uuid.uuid4().hex
    paths = [str(KIT), str(KIT / "reference" / "tiny_autograd.py"), str(KIT / "grader" / "suites" / "hidden"),
             "/root", "/home", "/etc/passwd", str(Path(sys.executable).resolve())]
    source = (f"PORT = {listener.getsockname()[1]}\nPATHS = {paths!r}\nKIT = {str(KIT)!r}\nMARK = {mark!r}\n"
              + PROBE)
    try:
        with Worker(write_submission(tmp_path, source), LIMITS, isolation) as worker:
            report = worker.start()
        assert report.ok, (report, worker.printed())
        [line] = [line for line in worker.printed().splitlines() if line.startswith("FACTS ")]
        return json.loads(line[len("FACTS "):]), isolation
    finally:
        listener.close()
        (KIT / f"probe-{mark}").unlink(missing_ok=True)


# ---------------------------------------------------------------- detection


def test_the_process_level_can_be_forced_by_argument_or_environment(monkeypatch):
    assert sandbox.detect("process").level == "process"
    monkeypatch.setenv("GRADER_ISOLATION", "process")
    assert sandbox.detect().level == "process"
    assert sandbox.detect().notes.startswith("requested")


def test_an_unknown_level_is_refused():
    with pytest.raises(ValueError, match="unknown isolation level"):
        sandbox.detect("chroot")


def test_a_level_asked_for_but_not_working_is_an_error_not_a_silent_fallback(monkeypatch):
    monkeypatch.setattr(sandbox, "_bubblewrap_level", lambda: (None, "bwrap is missing in this test"))
    with pytest.raises(sandbox.IsolationUnavailable, match="bwrap is missing in this test"):
        sandbox.detect("bubblewrap")
    monkeypatch.setenv("GRADER_ISOLATION", "bubblewrap")
    with pytest.raises(sandbox.IsolationUnavailable):
        sandbox.detect()
    monkeypatch.delenv("GRADER_ISOLATION")
    fallback = sandbox.detect()  # automatic detection falls back, and says why
    assert fallback.level in ("unprivileged", "process")
    if fallback.level == "process":
        assert fallback.notes


def test_the_description_names_the_level_and_every_layer():
    described = sandbox.detect("process").describe()
    assert described.startswith("process: ")
    for layer in ("time limits", "process-group kill", "capped output", "scrubbed environment"):
        assert layer in described
    if LINUX:
        assert "rlimits cpu/as/fsize/nofile/nproc/core" in described
        assert "grader not dumpable" in described


@needs_linux
def test_bubblewrap_describes_its_namespaces():
    isolation = isolation_or_skip("bubblewrap")
    described = isolation.describe()
    assert described.startswith("bubblewrap: ")
    assert "pid/net/ipc/uts namespaces" in described and "kit not mounted" in described
    if AS_ROOT:
        assert "own throwaway uid" in described and "no-new-privs" in described


def test_the_worker_code_is_staged_readable_by_all_and_writable_by_none_but_us():
    folder = Path(sandbox.staged_worker_dir())
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in sandbox.WORKER_DIR.glob("*.py"))
    assert folder.stat().st_mode & 0o777 == 0o755
    assert all(p.stat().st_mode & 0o777 == 0o644 for p in folder.iterdir())


# ------------------------------------------------------- what a worker sees


@pytest.mark.parametrize("level", sandbox.LEVELS)
def test_every_level_gives_the_worker_only_the_allowed_environment_and_channels(level, tmp_path, monkeypatch):
    if not LINUX:
        pytest.skip("the probe reads /proc")
    monkeypatch.setenv("GRADER_TEST_SECRET", "hunter2")
    facts, _ = probe(level, tmp_path)
    allowed = {*sandbox.SAFE_ENVIRONMENT, "PWD"}  # bwrap sets PWD
    assert set(facts["environment"]) <= allowed
    # stdin (/dev/null), stdout/stderr, the reply and request pipes, the progress
    # page, and the listing itself.
    targets = set(facts["fds"].values())
    assert all(t.startswith(("pipe:", "/dev/null", "/proc/", "/memfd:grader-progress")) for t in targets), targets


@needs_linux
def test_rlimits_hold_in_the_worker(tmp_path):
    facts, _ = probe("process", tmp_path)
    expected = LIMITS.for_worker()
    assert facts["limits"]["RLIMIT_AS"] == expected["memory_bytes"]
    assert facts["limits"]["RLIMIT_FSIZE"] == expected["file_bytes"]
    assert facts["limits"]["RLIMIT_NOFILE"] == expected["open_files"]
    assert facts["limits"]["RLIMIT_NPROC"] == expected["processes"]
    assert facts["limits"]["RLIMIT_CORE"] == 0
    assert facts["limits"]["RLIMIT_CPU"] == expected["cpu_seconds"]


@needs_linux
def test_bubblewrap_hides_the_kit_the_network_and_the_grader(tmp_path):
    facts, isolation = probe("bubblewrap", tmp_path)
    assert not any(facts["sees"].values()), facts["sees"]  # kit, reference, hidden suites, /root, /etc, our python
    assert not facts["connect"], "the worker reached the grading machine's loopback"
    assert not facts["signal_parent"], "the worker may signal its parent"
    assert facts["pids"] <= 3, "the worker sees processes outside its own namespace"
    assert facts["write_tmp"] and facts["tmp_bytes"] <= sandbox.TMPFS_BYTES
    assert not facts["write_usr"] and not facts["write_kit"]
    assert facts["usr_local"] in (None, [])  # /usr/local (and site-packages) masked
    assert facts["no_new_privs"] == "1" and int(facts["capabilities"], 16) == 0
    if AS_ROOT:
        assert sandbox.is_throwaway(facts["uid"])


@needs_linux
def test_unprivileged_runs_as_a_throwaway_uid_that_cannot_touch_the_grader(tmp_path):
    facts, _ = probe("unprivileged", tmp_path)
    assert sandbox.is_throwaway(facts["uid"])
    assert not facts["signal_parent"] and not facts["write_kit"]
    assert facts["no_new_privs"] == "1" and int(facts["capabilities"], 16) == 0


@needs_linux
def test_two_unprivileged_workers_never_share_a_uid():
    isolation = isolation_or_skip("unprivileged")
    uids = {sandbox.worker_uid(isolation) for _ in range(50)}
    assert len(uids) == 50 and all(map(sandbox.is_throwaway, uids))


# ------------------------------------------------------- the grader's side


@needs_linux
def test_the_grader_is_not_dumpable_once_it_has_started_a_worker(tmp_path):
    import ctypes

    with Worker(write_submission(tmp_path, "x = 1\n"), LIMITS, sandbox.detect("process")) as worker:
        worker.start()
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(3, 0, 0, 0, 0) == 0  # PR_GET_DUMPABLE


def _processes_with(marker):
    found = []
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as cmdline:
                if marker.encode() in cmdline.read():
                    found.append(int(name))
        except (OSError, ValueError):
            pass
    return found


def _appears(marker, seconds=10.0):
    """The daemon execs a moment after the worker has loaded."""
    deadline = time.monotonic() + seconds
    while not _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(_processes_with(marker))


def _gone(marker, seconds=5.0):
    deadline = time.monotonic() + seconds
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = _processes_with(marker)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return not left


DAEMON = textwrap.dedent('''
    import os, sys
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.closerange(0, 1024)
            os.execve(sys.executable, [sys.executable, "-I", "-S", "-c", "import time; time.sleep(300)", "{marker}"], {{}})
        os._exit(0)
    os.wait()
''')


@needs_linux
@pytest.mark.parametrize("level", sandbox.LEVELS)
def test_stop_kills_a_detached_daemon_and_spares_the_graders_other_children(level, tmp_path):
    isolation = isolation_or_skip(level)
    marker = f"daemon-{uuid.uuid4().hex}"
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with Worker(write_submission(tmp_path, DAEMON.format(marker=marker)), LIMITS, isolation) as worker:
            assert worker.start().ok
            assert _appears(marker), "the daemon did not start"
            late = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        assert _gone(marker), "the daemon survived stop()"
        assert bystander.poll() is None and late.poll() is None, "stop() killed a process that was not the worker's"
    finally:
        for process in (bystander, locals().get("late")):
            if process is not None:
                process.kill()
                process.wait()


GRADER_THAT_DIES = textwrap.dedent('''
    import sys, time
    from grader import sandbox
    from grader.worker_client import Limits, Worker
    worker = Worker(sys.argv[1], Limits(), sandbox.detect(sys.argv[2]))
    assert worker.start().ok
    print("started", flush=True)
    time.sleep(300)
''')


@needs_linux
@pytest.mark.parametrize("level", sandbox.LEVELS)
def test_a_grader_that_crashes_takes_its_worker_with_it(level, tmp_path):
    """If the grader itself is killed, its worker must not live on (bubblewrap: nor
    anything the worker started; elsewhere the worker's own processes may)."""
    isolation_or_skip(level)
    marker = f"orphan-{uuid.uuid4().hex}"
    source = f"MARKER = {marker!r}\n" + (DAEMON.format(marker=marker) if level == "bubblewrap" else "")
    submission = write_submission(tmp_path, source)
    grader = subprocess.Popen([sys.executable, "-c", GRADER_THAT_DIES, str(submission), level], cwd=KIT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert grader.stdout.readline() == b"started\n", grader.stderr.read().decode(errors="replace")
        worker_mark = str(submission) if level != "bubblewrap" else marker
        assert _appears(worker_mark)
        grader.kill()
        grader.wait()
        assert _gone(worker_mark), "the worker outlived its grader"
    finally:
        grader.kill()
        grader.wait()


# ---------------------------------------------------------------- output


def test_what_the_submission_prints_is_capped_in_total_and_stripped_of_control_characters(tmp_path):
    source = textwrap.dedent('''
        import os, sys
        sys.stdout.write("\\x1b[2J\\x1b]0;title\\x07" + "y" * 12000 + "\\n")
        sys.stdout.flush()

        class Value:
            def __init__(self, data):
                os._exit(3)  # every program restarts the worker, which prints again
    ''')
    with Worker(write_submission(tmp_path, source), LIMITS, sandbox.detect("process")) as worker:
        for _ in range(4):
            assert worker.run([["value", 1.0], ["read"]]).failure
        printed = worker.printed()
    assert worker.starts == 4
    assert len(printed) <= OUTPUT_CAP_BYTES + 100 and "not kept" in printed
    assert "\x1b" not in printed and "\x07" not in printed
