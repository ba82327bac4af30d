"""The isolation layers one by one: what each level lets a worker see and do.

A probe submission reports, from inside a real worker, what it can see; the
tests then say what each level must hide. Levels that do not work on this
machine are skipped with the reason (CI installs bubblewrap, so they run there).
"""

import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

from grader import sandbox
from grader.worker_client import OUTPUT_CAP_BYTES, Limits, Worker

pytestmark = pytest.mark.slow  # `make test-fast` leaves it out: it grades many submissions or builds environments

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

def syscall(number, *args):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args)) >= 0

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
    # x86_64 numbers: add_key to the user keyring, shmget(IPC_PRIVATE, 4096, 0600)
    "add_key": os.uname().machine == "x86_64" and syscall(248, 0, 0, 0, 0, -4),
    "shmget": os.uname().machine == "x86_64" and syscall(29, 0, 4096, 0o600),
    "write_shared_tmp": can(lambda: write("/dev/shm/probe-" + MARK)),
    "read_reference": can(lambda: open(os.path.join(KIT, "reference", "tiny_autograd.py")).read(1)),
    "list_kit": can(lambda: os.listdir(KIT)),
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


# ------------------------------------------------------- classmates


SNOOP = r'''
import glob, os
VICTIM = VICTIM_REVERSED[::-1]  # so that this file itself does not hold it
found = []
candidates = glob.glob("/tmp/grader-*/prepared.py") + glob.glob("/tmp/grader-*/*/tiny_autograd.py") + PLACES
for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
    try:
        words = open(f"/proc/{name}/cmdline", "rb").read().split(b"\0")
    except OSError:
        continue
    candidates += [w.decode(errors="replace") for w in words if w.endswith((b".json", b".py", b".csv"))]
for path in candidates:
    try:
        with open(path, errors="replace") as source:
            if VICTIM in source.read():
                found.append(path)
    except OSError:
        pass
print("SNOOPED", found)
'''


@needs_linux
@pytest.mark.parametrize("confined", [True, False], ids=["with-landlock", "without-landlock"])
@pytest.mark.parametrize("level", ["bubblewrap", "unprivileged"])
def test_a_worker_reads_nothing_of_another_student_present_or_past(level, confined, tmp_path):
    """Two students graded at once: the second cannot read the first one's copy
    (private to the first worker's uid), nor results written before (private to
    the grader), whether or not Landlock also confines it."""
    isolation = isolation_or_skip(level)
    if confined and not isolation.confined:
        pytest.skip("the kernel offers no Landlock here")
    if not confined:
        isolation = dataclasses.replace(isolation, confined=())
    victim = f"victim-{uuid.uuid4().hex}"
    past = tmp_path / "grades-results"
    past.mkdir(mode=0o700)
    (past / "alice.json").write_text(f'{{"note": "{victim}"}}')
    os.chmod(past / "alice.json", 0o600)
    places = [str(past / "alice.json")]
    workdir = Path(tempfile.mkdtemp(prefix="grader-"))
    CLEANUP.append(workdir)
    os.chmod(workdir, 0o711)
    first = workdir / "prepared.py"
    first.write_text(f"# {victim}\nimport time\ntime.sleep(3)\n")
    os.chmod(first, 0o600)
    second = write_submission(tmp_path, f"PLACES = {places!r}\nVICTIM_REVERSED = {victim[::-1]!r}\n" + SNOOP)
    with Worker(first, Limits(call_seconds=2, load_seconds=20, budget_seconds=30), isolation) as sleeping:
        thread = threading.Thread(target=sleeping.start, daemon=True)
        thread.start()
        time.sleep(1.0)  # the first worker is loading (sleeping) with its private copy in place
        with Worker(second, LIMITS, isolation) as snooping:
            assert snooping.start().ok
        [line] = [line for line in snooping.printed().splitlines() if line.startswith("SNOOPED")]
        thread.join(timeout=30)
    assert line == "SNOOPED []", line


# ------------------------------------------------------ confinement


@needs_linux
@pytest.mark.parametrize("level", sandbox.LEVELS)
def test_the_workers_own_confinement_holds_where_the_kernel_offers_it(level, tmp_path):
    """Landlock: no reading the kit, no writing outside a private /tmp, no TCP,
    no signals out; seccomp: no keyrings, no System V IPC. Whatever the level."""
    facts, isolation = probe(level, tmp_path)
    try:
        if "landlock files" in isolation.confined:  # (Landlock governs opening, not looking up names)
            assert not facts["read_reference"] and not facts["list_kit"]
            assert not facts["write_kit"] and not facts["write_shared_tmp"]
            assert facts["write_tmp"] == (level == "bubblewrap")  # its own tmpfs only
        if "landlock tcp" in isolation.confined:
            assert not facts["connect"]
        if "landlock signals" in isolation.confined:
            assert not facts["signal_parent"]
        if "seccomp" in isolation.confined:
            assert not facts["add_key"] and not facts["shmget"]
        assert facts["no_new_privs"] == "1"
    finally:
        for path in Path("/dev/shm").glob("probe-*"):
            path.unlink(missing_ok=True)


@needs_linux
def test_the_seccomp_filter_denies_every_abi_but_the_native_one():
    from grader.worker import confine

    for machine in ("x86_64", "aarch64"):
        program = confine.seccomp_program(machine)
        assert program[0] == (0x20, 0, 0, 4)  # load the architecture first
        assert program[-2][3] == 0x7FFF0000 and program[-1][3] == 0x00050001  # allow, else EPERM
        denied = {insn[3] for insn in program if insn[0] == 0x15 and insn[1] and insn[3] < 1000}
        expected = {numbers[0 if machine == "x86_64" else 1] for numbers in confine._DENIED.values()}
        assert denied == expected
        for index, (code, jt, jf, _) in enumerate(program):  # every jump lands inside the program
            if code in (0x15, 0x35):
                assert index + 1 + max(jt, jf) < len(program)


@needs_linux
@pytest.mark.parametrize("level", sandbox.LEVELS)
def test_a_worker_that_stops_reading_cannot_block_the_grader(level, tmp_path):
    """The worker shrinks its request pipe to one page and never reads it: a large
    program must fail within the call limit, not block the grader in write()."""
    isolation = isolation_or_skip(level)
    source = textwrap.dedent(r'''
        import fcntl, sys, time
        def serve(namespace, requests, *rest):
            try:
                fcntl.fcntl(requests.fileno(), 1031, 4096)  # F_SETPIPE_SZ
            except OSError:  # EBUSY: the request came first and fills more than a page
                pass
            time.sleep(3600)
        sys.modules["__main__"].serve = serve
    ''')
    program = [["value", float(i)] for i in range(20000)] + [["read"]]
    outcome = {}
    with Worker(write_submission(tmp_path, source), Limits(call_seconds=1, load_seconds=10, budget_seconds=20),
                isolation) as worker:
        assert worker.start().ok
        thread = threading.Thread(target=lambda: outcome.update(reply=worker.run(program)), daemon=True)
        started = time.monotonic()
        thread.start()
        thread.join(timeout=15)
        assert not thread.is_alive(), "the grader is blocked writing to the worker"
    assert time.monotonic() - started < 5
    assert "stopped reading" in outcome["reply"].failure


@needs_linux
def test_as_root_without_a_way_to_drop_privileges_the_grader_refuses(monkeypatch):
    if not AS_ROOT:
        pytest.skip("only a root grader must refuse")
    monkeypatch.setattr(sandbox, "_bubblewrap_level", lambda: (None, "no bwrap in this test"))
    monkeypatch.setattr(sandbox, "_unprivileged_level", lambda: (None, "no setpriv in this test"))
    with pytest.raises(sandbox.IsolationUnavailable, match="GRADER_ISOLATION=process"):
        sandbox.detect()
    from grader import cli

    assert cli.main(["grade", str(KIT / "reference" / "tiny_autograd.py"), "--out", "/nonexistent/r.json"]) == 2
    monkeypatch.setenv("GRADER_ISOLATION", "process")
    assert "runs as root" in sandbox.detect().notes  # asked for by name, it is allowed and says so


# ---------------------------------------------------- control groups


def _sleeper(marker):
    return [sys.executable, "-c", "import time; time.sleep(60)", marker]


@needs_linux
def test_a_box_bounds_and_ends_every_process_in_it():
    from grader import cgroups

    box = cgroups.Box.create(256 * 1024 * 1024, 8)
    if box is None:
        pytest.skip("no usable control group hierarchy here")
    marker = f"boxed-{uuid.uuid4().hex}"
    try:
        group = box.worker_group()
        started = [subprocess.Popen(group.enter_command(_sleeper(marker))) for _ in range(3)]
        assert _appears(marker)
        deadline = time.monotonic() + 5
        while len(group.pids()) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(group.pids()) == 3
        assert group.kill()
        for process in started:
            process.wait(timeout=5)
        assert _gone(marker)
        group.remove()
    finally:
        box.kill()
        box.remove()
    assert not any(folder.exists() for folder in box.folders)


@needs_linux
def test_the_keeper_ends_what_a_dead_grader_left_registered():
    from grader import cgroups
    from grader.keeper import Keeper

    box = cgroups.Box.create(256 * 1024 * 1024, 8)
    if box is None:
        pytest.skip("no usable control group hierarchy here")
    marker = f"kept-{uuid.uuid4().hex}"
    keeper = Keeper()
    group = box.worker_group()
    orphan = subprocess.Popen(group.enter_command(_sleeper(marker)), start_new_session=True)
    try:
        assert _appears(marker)
        keeper.watch("cgroup", box.key())
        keeper._process.stdin.close()  # what the kernel does when the grader dies
        keeper._process.wait(timeout=20)
        orphan.wait(timeout=5)
        assert _gone(marker)
        assert not any(folder.exists() for folder in box.folders)
    finally:
        orphan.kill()
        box.kill()
        box.remove()
