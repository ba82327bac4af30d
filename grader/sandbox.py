"""How the worker process is started and ended: the isolation layers around student code.

Levels, strongest first (detected once per process, never assumed):

    bubblewrap  Linux: bwrap namespaces (pid, net, ipc, uts), read-only /usr,
                a private size-capped /tmp, only the worker code and the
                submission mounted (nothing of the kit, no site-packages);
                as root, the worker drops to uid `nobody` with no-new-privs and
                no capabilities. Its processes die with the namespace.
    unprivileged  Linux as root when namespaces are not available (typically a
                container): a plain process run as a throwaway uid of its own
                (no other process has it) with no-new-privs and no capabilities,
                so it cannot signal or read the grader or other workers, write
                the kit, or fork without bound. It still sees the world-readable
                part of the file system, a shared /tmp, and the network.
    process     everywhere: a fresh `python -I` in its own session, as the
                grader's own user.

Every level also gets the rlimits of grader/worker/limits.py, the time limits,
process-group kill, output cap and reply validation of grader/worker_client.py,
and an environment scrubbed to an allow-list. Outside bubblewrap, ending a
worker also sweeps the processes it left behind (see `sweep`).

`GRADER_ISOLATION=bubblewrap|unprivileged|process` (or `detect(level)`) asks for one
level; asking for one that does not work here raises `IsolationUnavailable`
rather than grading with less than was asked.
"""

import atexit
import dataclasses
import functools
import json
import multiprocessing.util
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

WORKER_DIR = Path(__file__).resolve().parent / "worker"
NOBODY = 65534
# Throwaway uids of the unprivileged level: THROWAWAY_UIDS + n, n < THROWAWAY_COUNT.
# A range no distribution, systemd or container tool hands out (they stay below 0x70000000).
THROWAWAY_UIDS = 0x7A000000
THROWAWAY_COUNT = 1 << 24
SYSTEM_PYTHON = "/usr/bin/python3"
TMPFS_BYTES = 64 * 1024 * 1024  # the private /tmp of a bubblewrap worker
LEVELS = ("bubblewrap", "unprivileged", "process")
TOKEN_VARIABLE = "GRADER_WORKER"  # marks a worker's processes (not a secret)

# The only variables the worker sees: no tokens, no secrets, nothing from CI.
SAFE_ENVIRONMENT = {
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONIOENCODING": "utf-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
    "HOME": "/tmp",
}



def drop_privileges(uid):
    """setpriv: real and effective uid and gid `uid`, no supplementary groups, no way
    back to privileges (no-new-privs), and no capabilities left anywhere."""
    return [
        "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
        "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all",
    ]


def throwaway_uid():
    """A uid no running process has: concurrent workers can neither signal nor
    trace each other, and each has its own RLIMIT_NPROC count."""
    in_use = set()
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        try:
            in_use.add(os.stat(f"/proc/{name}").st_uid)
        except OSError:
            pass
    while True:
        uid = THROWAWAY_UIDS + secrets.randbelow(THROWAWAY_COUNT)
        if uid not in in_use:
            return uid


def is_throwaway(uid):
    return isinstance(uid, int) and THROWAWAY_UIDS <= uid < THROWAWAY_UIDS + THROWAWAY_COUNT


class IsolationUnavailable(RuntimeError):
    """A level was asked for (GRADER_ISOLATION or detect(level)) that does not work here."""


@dataclass(frozen=True)
class Isolation:
    level: str  # "bubblewrap", "unprivileged" or "process"
    python: str  # the interpreter the worker runs
    run_as: object = None  # None: the grader's uid; an int: that uid; "throwaway": a fresh uid per worker
    notes: str = ""  # why this level and not a stronger one
    layers: tuple = ()  # what holds at this level, for the results
    hidden_paths: tuple = field(default=(), compare=False)  # bubblewrap: paths masked by empty tmpfs

    def describe(self):
        """One line for the results and the summary: level, layers, and why."""
        text = f"{self.level}: " + ", ".join(self.layers)
        return f"{text} ({self.notes})" if self.notes else text


# ------------------------------------------------------------------ detection


def detect(requested="auto"):
    """The strongest isolation that works here, or exactly the level asked for.

    `requested` is "auto" (then GRADER_ISOLATION decides, if set), or one of LEVELS."""
    if requested == "auto":
        requested = os.environ.get("GRADER_ISOLATION", "").strip().lower() or "auto"
    if requested not in ("auto", *LEVELS):
        raise ValueError(f"unknown isolation level {requested!r}; choose auto or one of {LEVELS}")
    if requested == "process":
        return _process_level("requested")
    reasons = []
    for level, probe in (("bubblewrap", _bubblewrap_level), ("unprivileged", _unprivileged_level)):
        if requested not in ("auto", level):
            continue
        isolation, why = probe()
        if isolation is not None:
            if reasons:  # say why the stronger levels did not work
                isolation = dataclasses.replace(isolation, notes="; ".join(reasons + [isolation.notes]))
            return isolation
        if requested == level:
            raise IsolationUnavailable(f"{level} isolation was requested but {why}")
        reasons.append(why)
    return _process_level("; ".join(reasons))


@functools.lru_cache(maxsize=None)
def _bubblewrap_level():
    if not sys.platform.startswith("linux"):
        return None, f"there are no namespaces on {sys.platform}"
    if not shutil.which("bwrap"):
        return None, "bubblewrap is not installed"
    as_root = os.geteuid() == 0
    drop = as_root and bool(shutil.which("setpriv"))
    python = SYSTEM_PYTHON if as_root and os.path.exists(SYSTEM_PYTHON) else sys.executable
    hidden = _paths_to_hide(python)
    if hidden is None:
        return None, f"{python} cannot run the worker"
    layers = ["pid/net/ipc/uts namespaces", "read-only system", "private /tmp", "kit not mounted"]
    if drop:
        layers += ["uid nobody", "no-new-privs", "no capabilities"]
    elif as_root:
        layers += ["uid 0 without capabilities"]
    run_as = NOBODY if drop else None
    candidate = Isolation("bubblewrap", python, run_as, "", tuple(layers + _common_layers()), tuple(hidden))
    probe = bubblewrap_command(candidate, staged_worker_dir(), None, ["-c", _PROBE % "/grader-worker"])
    if not _runs(probe, None):
        return None, "bubblewrap is installed but cannot create namespaces here"
    return candidate, ""


@functools.lru_cache(maxsize=None)
def _unprivileged_level():
    if not sys.platform.startswith("linux"):
        return None, f"setpriv is Linux-only ({sys.platform})"
    if os.geteuid() != 0:
        return None, "only root can run the worker as another user"
    if not shutil.which("setpriv"):
        return None, "setpriv is not installed"
    python = SYSTEM_PYTHON if os.path.exists(SYSTEM_PYTHON) else sys.executable
    worker_dir = staged_worker_dir()
    if not _runs(drop_privileges(throwaway_uid()) + [python, "-I", "-B", "-c", _PROBE % worker_dir], "/"):
        return None, f"an unprivileged uid cannot run {python} on the worker"
    layers = ["own throwaway uid", "no-new-privs", "no capabilities", "orphan sweep"]
    why = "no namespaces here: the worker still sees the file system and the network"
    return Isolation("unprivileged", python, "throwaway", why, tuple(layers + _common_layers())), ""


def _process_level(why):
    layers = ["orphan sweep"] if sys.platform.startswith("linux") else []
    return Isolation("process", sys.executable, None, why, tuple(layers + _common_layers()))


def _common_layers():
    if sys.platform == "win32":
        rlimits = "no rlimits"
    elif sys.platform == "darwin":
        rlimits = "rlimits cpu/fsize/nofile/nproc/core (no memory limit)"
    else:
        rlimits = "rlimits cpu/as/fsize/nofile/nproc/core"
    layers = [rlimits, "time limits", "process-group kill", "capped output", "scrubbed environment"]
    if sys.platform.startswith("linux"):
        layers.append("grader not dumpable")
    return layers


# Imports the worker's own modules: checks the interpreter can read and run them.
_PROBE = "import sys; sys.path.insert(0, %r); import interpreter, limits"


def _runs(command, cwd):
    try:
        done = subprocess.run(command, capture_output=True, timeout=20, env=SAFE_ENVIRONMENT, cwd=cwd)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _paths_to_hide(python):
    """Installed packages of the worker's interpreter (and /usr/local): the kit may be
    installed there, and the worker needs only the standard library. None: python is unusable."""
    script = (
        "import json, site, sys, sysconfig\n"
        "base = {'base': sys.base_prefix, 'platbase': sys.base_exec_prefix}\n"
        "paths = sysconfig.get_paths(vars=base)\n"
        "found = site.getsitepackages() + [paths['purelib'], paths['platlib']]\n"
        "print(json.dumps([sys.base_prefix, found]))"
    )
    try:
        done = subprocess.run([python, "-I", "-c", script], capture_output=True, timeout=20, env=SAFE_ENVIRONMENT)
        prefix, packages = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    hidden = [p for p in packages if os.path.isdir(p)]
    if os.path.isdir("/usr/local") and not os.path.realpath(python).startswith("/usr/local/") \
            and not prefix.startswith("/usr/local"):
        hidden.append("/usr/local")
    kept = []
    for path in sorted(set(hidden)):  # a parent sorts before its children
        if not any(path.startswith(parent.rstrip("/") + "/") for parent in kept):
            kept.append(path)
    return kept


# ------------------------------------------------------------- worker code


@functools.lru_cache(maxsize=None)
def staged_worker_dir():
    """A private copy of the worker's code, readable by anyone, writable only by us.

    The worker (possibly uid nobody) then needs no access to the kit at all, so
    the kit may be made unreadable to other users; and a checkout made with a
    strict umask still works."""
    folder = Path(tempfile.mkdtemp(prefix="grader-worker-"))
    atexit.register(_remove_staged, folder, os.getpid())
    # multiprocessing children (batch grading) end with os._exit: no atexit there.
    multiprocessing.util.Finalize(None, _remove_staged, args=(folder, os.getpid()), exitpriority=0)
    for source in sorted(WORKER_DIR.glob("*.py")):
        target = folder / source.name
        shutil.copyfile(source, target)
        os.chmod(target, 0o644)
    os.chmod(folder, 0o755)
    return str(folder)


def _remove_staged(folder, owner):
    if os.getpid() == owner:  # not from a forked child that happens to exit normally
        shutil.rmtree(folder, ignore_errors=True)


def worker_environment(token):
    """The worker's whole environment: the allow-list plus the marker of its processes."""
    return {**SAFE_ENVIRONMENT, TOKEN_VARIABLE: token}


def bubblewrap_command(isolation, worker_dir, submission_dir, python_args, uid=None):
    command = [
        "bwrap",
        "--die-with-parent",
        "--new-session",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--ro-bind", "/usr", "/usr",
    ]
    for name in ("bin", "lib", "lib32", "lib64", "sbin"):
        target = Path("/") / name
        if target.is_symlink():
            command += ["--symlink", os.readlink(target), str(target)]
        elif target.is_dir():
            command += ["--ro-bind", str(target), str(target)]
    if not isolation.python.startswith("/usr/"):
        # A python outside /usr (a virtualenv or pyenv build) must be visible too.
        prefix = Path(os.path.realpath(isolation.python)).parents[1]
        command += ["--ro-bind", str(prefix), str(prefix)]
    for path in isolation.hidden_paths:
        command += ["--tmpfs", path, "--remount-ro", path]
    command += [
        "--proc", "/proc",
        "--dev", "/dev",
        "--perms", "1777", "--size", str(TMPFS_BYTES), "--tmpfs", "/tmp",
        "--ro-bind", str(worker_dir), "/grader-worker",
        "--chdir", "/tmp",
    ]
    if submission_dir is not None:
        command += ["--ro-bind", str(submission_dir), "/submission"]
    if isolation.run_as is not None:
        command += drop_privileges(uid if uid is not None else worker_uid(isolation))
    elif os.geteuid() == 0:
        command += ["--cap-drop", "ALL"]
    return command + [isolation.python, "-I", "-B", *python_args]


def worker_uid(isolation):
    """The uid the next worker runs as (None: the grader's own), chosen afresh for throwaway uids."""
    if isolation.run_as is None:
        return None
    return throwaway_uid() if isolation.run_as == "throwaway" else int(isolation.run_as)


def worker_command(isolation, submission_file, reply_fd, limits_json, module_name="tiny_autograd", uid=None):
    """(argv, cwd) that start a worker for `submission_file` (a prepared .py file in its own folder),
    as `uid` (default: `worker_uid(isolation)`)."""
    submission_file = Path(submission_file)
    worker_dir = staged_worker_dir()
    if uid is None:
        uid = worker_uid(isolation)
    if isolation.level == "bubblewrap":
        inside = f"/submission/{submission_file.name}"
        args = ["/grader-worker/main.py", inside, module_name, str(reply_fd), limits_json]
        return bubblewrap_command(isolation, worker_dir, submission_file.parent, args, uid), None
    args = [os.path.join(worker_dir, "main.py"), str(submission_file), module_name, str(reply_fd), limits_json]
    prefix = drop_privileges(uid) if uid is not None else []
    return [*prefix, isolation.python, "-I", "-B", *args], str(submission_file.parent)


# ------------------------------------------------------- the grader's side


_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36


@functools.lru_cache(maxsize=None)
def _prctl():
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    prctl = libc.prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return prctl


_protections = set()
_protected_pid = [None]  # a forked child inherits this set but not the subreaper bit


def _current_protections():
    if _protected_pid[0] != os.getpid():
        _protections.clear()
        _protected_pid[0] = os.getpid()
    return _protections


def protect_grader(subreaper=False):
    """Linux: make this (grader) process non-dumpable, so that a worker running as
    the same non-root uid cannot ptrace it or read its memory and environment
    through /proc; with `subreaper`, orphans of its workers are re-parented to it
    (instead of init) so that `sweep` still finds them. Returns what holds."""
    if not sys.platform.startswith("linux"):
        return set()
    protections = _current_protections()
    wanted = {"not dumpable": (_PR_SET_DUMPABLE, 0)}
    if subreaper:
        wanted["subreaper"] = (_PR_SET_CHILD_SUBREAPER, 1)
    for name, (option, value) in wanted.items():
        if name in protections:
            continue
        try:
            if _prctl()(option, value, 0, 0, 0) == 0:
                protections.add(name)
        except (OSError, AttributeError):
            pass
    return set(protections)


# ------------------------------------------------------------------ sweeping


@dataclass(frozen=True)
class ProcessInfo:
    pid: int
    ppid: int
    pgid: int
    sid: int
    start: int  # clock ticks since boot


def process_table():
    """Every process we can see: {pid: ProcessInfo} (Linux /proc; empty elsewhere)."""
    table = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if name.isdigit():
            info = _read_stat(int(name))
            if info is not None:
                table[info.pid] = info
    return table


def my_children():
    """The pids of this process's children (Linux: /proc/self/task/*/children)."""
    try:
        pids = set()
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as children:
                pids.update(int(pid) for pid in children.read().split())
        return pids
    except (OSError, ValueError):
        me = os.getpid()
        return {info.pid for info in process_table().values() if info.ppid == me}


def _read_stat(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            raw = stat.read()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2:].split()
    try:
        return ProcessInfo(pid, int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]))
    except (IndexError, ValueError):
        return None


def _owner(pid):
    """The owner of /proc/PID: the process's uid (root for one that made itself non-dumpable)."""
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def _real_uid(pid):
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"Uid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _has_token(pid, marker):
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return marker in environ.read().split(b"\0")
    except OSError:
        return False


def _signal(info, number):
    """Signal a process only if it is still the one we looked at (pid reuse)."""
    try:
        fd = os.pidfd_open(info.pid)
    except (AttributeError, OSError):
        fd = None
    try:
        current = _read_stat(info.pid)
        if current is None or current.start != info.start:
            return
        if fd is not None:
            signal.pidfd_send_signal(fd, number)
        else:
            os.kill(info.pid, number)
    except (ProcessLookupError, PermissionError, OSError):
        pass
    finally:
        if fd is not None:
            os.close(fd)


def sweep(worker_pid, token, born_after, spare=(), uid=None, group_stopped=False, rounds=20):
    """Kill the worker `worker_pid` and every process it left behind; returns how many.

    Found by: its session and process group, descent from it, and, when this
    process is a subreaper, children adopted from it: born since
    `born_after` (boot clock ticks), outside our own session, owned by the
    worker's uid, and not in `spare` (our own children that are not this
    worker's); when it is not, the marker `token` in the environment (an exec
    with a new environment drops it). With a throwaway `uid` (the unprivileged
    level), every process of that uid is the worker's. Everything found is stopped
    first (a stopped process cannot fork) and then killed, until a scan finds
    nothing new; `group_stopped` says the caller has stopped the worker's process
    group already, so that a scan finding nothing else needs no second look.
    Linux only; elsewhere the caller's process-group kill is all there is."""
    me = os.getpid()
    my_session = os.getsid(0)
    marker = f"{TOKEN_VARIABLE}={token}".encode()
    adopt = "subreaper" in _current_protections()
    owner = os.getuid() if uid is None else uid
    throwaway = is_throwaway(uid)
    found = {}
    for _ in range(rounds):
        table = process_table()
        if not table:
            break
        roots = {worker_pid} | set(found)
        new = {}
        for info in table.values():
            if info.pid in found or info.pid == me:
                continue
            if info.pid == worker_pid or worker_pid in (info.pgid, info.sid):
                new[info.pid] = info
            elif throwaway and _owner(info.pid) == uid:
                new[info.pid] = info
            elif adopt and info.ppid == me and info.start >= born_after and info.pid not in spare \
                    and info.sid != my_session and _real_uid(info.pid) == owner:
                new[info.pid] = info
        # Descendants of anything found (children not yet re-parented).
        grew = True
        while grew:
            grew = False
            for info in table.values():
                if info.pid not in new and info.pid not in found and info.pid != me \
                        and (info.ppid in roots or info.ppid in new):
                    new[info.pid] = info
                    grew = True
        if not adopt:
            # Without a subreaper, detached orphans went to init: look for the marker
            # in environments (slower: one more file per process).
            for info in table.values():
                if info.pid not in new and info.pid not in found and info.pid != me \
                        and _has_token(info.pid, marker):
                    new[info.pid] = info
        if not new:
            break
        for info in new.values():
            _signal(info, signal.SIGSTOP)
        found.update(new)
        if group_stopped and all(info.pgid == worker_pid for info in new.values()):
            break  # all of them were stopped before the scan: none can have forked since
    for info in found.values():
        _signal(info, signal.SIGKILL)
    _reap([info for info in found.values() if info.ppid == me and info.pid != worker_pid])
    return len(found)


def _reap(children, seconds=1.0):
    """Collect adopted children we killed, so they do not stay zombies of the grader."""
    deadline = time.monotonic() + seconds
    waiting = {info.pid for info in children}
    while waiting and time.monotonic() < deadline:
        for pid in list(waiting):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                waiting.discard(pid)
        if waiting:
            time.sleep(0.01)


def boot_ticks_now():
    """The current time in the unit of ProcessInfo.start (Linux), for `sweep(born_after=...)`."""
    try:
        with open("/proc/uptime") as uptime:
            seconds = float(uptime.read().split()[0])
        return int(seconds * os.sysconf("SC_CLK_TCK")) - 1
    except (OSError, ValueError, IndexError):
        return 0
