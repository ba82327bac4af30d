"""How the worker process is started: the isolation levels around student code.

Levels, strongest first (detected once per process, never assumed):

    bubblewrap  Linux: bwrap namespaces (pid, net, ipc, uts), read-only /usr,
                a private size-capped /tmp, only the worker code and the
                submission mounted (nothing of the kit, no site-packages);
                as root, each worker runs as a throwaway uid of its own with
                no-new-privs and no capabilities. Its processes die with the namespace.
    unprivileged  Linux as root when namespaces are not available (typically a
                container): a plain process run as a throwaway uid of its own
                (no other process has it) with no-new-privs and no capabilities,
                so it cannot signal or read the grader or other workers, write
                the kit, or fork without bound.
    process     a fresh `python -I` in its own session, as the grader's own user.
                As root (where neither level above works) it is refused unless
                asked for by name: student code would run as root.

Every level also gets, where the kernel offers them, the worker's own
confinement (grader/worker/confine.py: Landlock on files, TCP and signals;
seccomp on keyrings, System V IPC, message queues and ptrace), a control group
per submission (grader/cgroups.py: memory and tasks of all its processes), the
rlimits of grader/worker/limits.py, and the time limits, process-group kill,
output cap and reply validation of grader/worker_client.py, with an environment
scrubbed to an allow-list. Outside bubblewrap, ending a worker also sweeps the
processes it left behind (grader/sweep.py), and a keeper process does it if the
grader itself dies (grader/keeper.py).

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
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from grader import cgroups

WORKER_DIR = Path(__file__).resolve().parent / "worker"
# Throwaway uids: THROWAWAY_UIDS + n, n < THROWAWAY_COUNT. A range no
# distribution, systemd or container tool hands out (they stay below 0x70000000).
THROWAWAY_UIDS = 0x7A000000
THROWAWAY_COUNT = 1 << 24
SYSTEM_PYTHON = "/usr/bin/python3"
TMPFS_BYTES = 64 * 1024 * 1024  # the private /tmp of a bubblewrap worker
LEVELS = ("bubblewrap", "unprivileged", "process")
INSIDE_WORKER_DIR = "/grader-worker"  # where bubblewrap mounts the worker code
INSIDE_SUBMISSION_DIR = "/submission"

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
    trace each other, each has its own RLIMIT_NPROC count, and what the kernel
    keeps per uid (keyrings, say) is never met again by another worker."""
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
    """A level was asked for (GRADER_ISOLATION or detect(level)) that does not work here,
    or none is safe to use (a root grader that cannot drop privileges)."""


@dataclass(frozen=True)
class Isolation:
    level: str  # "bubblewrap", "unprivileged" or "process"
    python: str  # the interpreter the worker runs
    run_as: object = None  # None: the grader's uid; "throwaway": a fresh uid per worker
    notes: str = ""  # why this level and not a stronger one
    layers: tuple = ()  # what holds at this level, for the results
    hidden_paths: tuple = field(default=(), compare=False)  # bubblewrap: paths masked by empty tmpfs
    confined: tuple = ()  # what the worker's own confinement holds here (probed)
    cgroups: bool = False  # a control group per submission

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
        return _process_level("requested" + (": student code runs as root" if _as_root() else ""))
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
    if _as_root():
        raise IsolationUnavailable(
            "the grader runs as root and cannot run student code as another user here ("
            + "; ".join(reasons) + "). Install bubblewrap or setpriv (util-linux), run the grader as a "
            "normal user, or set GRADER_ISOLATION=process to grade as root anyway (not for official grades)")
    return _process_level("; ".join(reasons))


def _as_root():
    return hasattr(os, "geteuid") and os.geteuid() == 0


@functools.lru_cache(maxsize=None)
def _bubblewrap_level():
    if not sys.platform.startswith("linux"):
        return None, f"there are no namespaces on {sys.platform}"
    if not shutil.which("bwrap"):
        return None, "bubblewrap is not installed"
    as_root = _as_root()
    drop = as_root and bool(shutil.which("setpriv"))
    python = SYSTEM_PYTHON if as_root and os.path.exists(SYSTEM_PYTHON) else sys.executable
    hidden = _paths_to_hide(python)
    if hidden is None:
        return None, f"{python} cannot run the worker"
    run_as = "throwaway" if drop else None
    candidate = Isolation("bubblewrap", python, run_as, "", (), tuple(hidden))
    probe = bubblewrap_command(candidate, staged_worker_dir(), None,
                               ["-c", _probe_script(INSIDE_WORKER_DIR, ["/tmp"])], uid=_probe_uid(candidate))
    confined = _probe(probe, None)
    if confined is None:
        return None, "bubblewrap is installed but cannot create namespaces here"
    layers = ["pid/net/ipc/uts namespaces", "read-only system", "private /tmp", "kit not mounted"]
    if drop:
        layers += ["own throwaway uid", "no-new-privs", "no capabilities"]
    elif as_root:
        layers += ["uid 0 without capabilities"]
    return _finish(candidate, layers, confined), ""


@functools.lru_cache(maxsize=None)
def _unprivileged_level():
    if not sys.platform.startswith("linux"):
        return None, f"setpriv is Linux-only ({sys.platform})"
    if not _as_root():
        return None, "only root can run the worker as another user"
    if not shutil.which("setpriv"):
        return None, "setpriv is not installed"
    python = SYSTEM_PYTHON if os.path.exists(SYSTEM_PYTHON) else sys.executable
    worker_dir = staged_worker_dir()
    confined = _probe(drop_privileges(throwaway_uid()) + [python, "-I", "-B", "-c", _probe_script(worker_dir, [])],
                      "/")
    if confined is None:
        return None, f"an unprivileged uid cannot run {python} on the worker"
    layers = ["own throwaway uid", "no-new-privs", "no capabilities", "orphan sweep", "keeper"]
    why = "no namespaces here"
    if "landlock files" not in confined:
        why += ": the worker still sees the file system and the network"
    candidate = Isolation("unprivileged", python, "throwaway", why)
    return _finish(candidate, layers, confined), ""


@functools.lru_cache(maxsize=None)
def _process_confinement():
    return _probe([sys.executable, "-I", "-B", "-c", _probe_script(staged_worker_dir(), [])], "/") or ()


def _process_level(why):
    layers = ["orphan sweep", "keeper"] if sys.platform.startswith("linux") else []
    candidate = Isolation("process", sys.executable, None, why)
    return _finish(candidate, layers, _process_confinement() if sys.platform.startswith("linux") else ())


def _finish(candidate, layers, confined):
    """The level with every layer that holds, in the order the results list them."""
    with_cgroups = cgroups.hierarchy() is not None
    layers = [*layers, *(name for name in _confinement_layers(confined) if name not in layers)]
    if with_cgroups:
        layers.append(f"cgroup v{cgroups.hierarchy().version} per submission (memory, tasks)")
    layers += _common_layers()
    return dataclasses.replace(candidate, layers=tuple(layers), confined=tuple(confined), cgroups=with_cgroups)


def _confinement_layers(confined):
    names = []
    if "no-new-privs" in confined:
        names.append("no-new-privs")
    landlock = [name.split()[1] for name in confined if name.startswith("landlock ")]
    if landlock:
        names.append("landlock " + "/".join(landlock))
    if "seccomp" in confined:
        names.append("seccomp keyrings/ipc/ptrace")
    return names


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


def _probe_script(worker_dir, writable):
    """Imports the worker's modules and applies its confinement: prints what held."""
    return (
        "import json, os, sys; sys.path.insert(0, %r); import interpreter, limits, confine; "
        "prefixes = sorted({os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, sys.exec_prefix)}); "
        "print(json.dumps(confine.confine(confine.readable_paths(prefixes, [%r]), %r)))"
    ) % (worker_dir, worker_dir, list(writable))


def _probe_uid(isolation):
    return throwaway_uid() if isolation.run_as == "throwaway" else None


def _probe(command, cwd):
    """The confinement names the probe printed, or None if it did not run."""
    try:
        done = subprocess.run(command, capture_output=True, timeout=20, env=SAFE_ENVIRONMENT, cwd=cwd)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    try:
        held = json.loads(done.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return ()
    return tuple(name for name in held if isinstance(name, str))


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

    The worker (possibly a throwaway uid) then needs no access to the kit at all,
    so the kit may be made unreadable to other users; and a checkout made with a
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
        "--ro-bind", str(worker_dir), INSIDE_WORKER_DIR,
        "--chdir", "/tmp",
    ]
    if submission_dir is not None:
        command += ["--ro-bind", str(submission_dir), INSIDE_SUBMISSION_DIR]
    if uid is not None:
        command += drop_privileges(uid)
    elif _as_root():
        command += ["--cap-drop", "ALL"]
    return command + [isolation.python, "-I", "-B", *python_args]


def worker_uid(isolation):
    """The uid the next worker runs as (None: the grader's own), a fresh one for each worker."""
    return throwaway_uid() if isolation.run_as == "throwaway" else None


def worker_command(isolation, submission_file, reply_fd, settings, uid=None, module_name="tiny_autograd"):
    """(argv, cwd) that start a worker for `submission_file` (a prepared .py file in
    a folder of its own) as `uid` (None: the grader's own). `settings` (limits,
    progress descriptor) reach the worker as JSON, with the paths its
    confinement may read and write as it sees them."""
    submission_file = Path(submission_file)
    worker_dir = staged_worker_dir()
    settings = {**settings, "confine": bool(isolation.confined)}
    if isolation.level == "bubblewrap":
        settings = {**settings, "readable": [INSIDE_WORKER_DIR, INSIDE_SUBMISSION_DIR], "writable": ["/tmp"]}
        inside = f"{INSIDE_SUBMISSION_DIR}/{submission_file.name}"
        args = [f"{INSIDE_WORKER_DIR}/main.py", inside, module_name, str(reply_fd), json.dumps(settings)]
        return bubblewrap_command(isolation, worker_dir, submission_file.parent, args, uid), None
    settings = {**settings, "readable": [worker_dir, str(submission_file.parent)], "writable": []}
    args = [os.path.join(worker_dir, "main.py"), str(submission_file), module_name, str(reply_fd),
            json.dumps(settings)]
    prefix = drop_privileges(uid) if uid is not None else []
    return [*prefix, isolation.python, "-I", "-B", *args], str(submission_file.parent)


def worker_environment():
    """The worker's whole environment: the allow-list."""
    return dict(SAFE_ENVIRONMENT)
