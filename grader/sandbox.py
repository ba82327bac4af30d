"""How the worker process is started: the isolation layers around student code.

Levels, strongest first (detected once, never assumed):

    bubblewrap  Linux: bwrap namespaces (pid, net, ipc, uts), read-only /usr,
                private /tmp, only the worker code and the submission mounted;
                as root, the worker drops to uid `nobody` with no-new-privs.
    process     everywhere: a fresh `python -I` in its own session, rlimits,
                scrubbed environment.

Both levels also get the limits of grader/worker/limits.py, the time limits and
process-group kill of grader/worker_client.py, and the output cap.
"""

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

WORKER_DIR = Path(__file__).resolve().parent / "worker"
NOBODY = 65534
SYSTEM_PYTHON = "/usr/bin/python3"

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


@dataclass(frozen=True)
class Isolation:
    level: str  # "bubblewrap" or "process"
    python: str
    drop_to_nobody: bool
    notes: str

    def describe(self):
        return f"{self.level} ({self.notes})"


@functools.lru_cache(maxsize=None)
def detect(requested="auto"):
    """The strongest isolation that works here; `requested="process"` forces the fallback."""
    if requested == "process" or os.environ.get("GRADER_ISOLATION") == "process":
        return _process_level("requested")
    if not sys.platform.startswith("linux"):
        return _process_level(f"no namespaces on {sys.platform}")
    if not shutil.which("bwrap"):
        return _process_level("bubblewrap not installed")
    as_root = os.geteuid() == 0
    python = SYSTEM_PYTHON if as_root and os.path.exists(SYSTEM_PYTHON) else sys.executable
    candidate = Isolation(
        "bubblewrap",
        python,
        drop_to_nobody=as_root and bool(shutil.which("setpriv")),
        notes="namespaces, read-only system, no network" + (", uid nobody" if as_root else ""),
    )
    probe = bubblewrap_command(candidate, WORKER_DIR, None, ["-c", "pass"])
    try:
        ok = subprocess.run(probe, capture_output=True, timeout=10, env=SAFE_ENVIRONMENT).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        return _process_level("bubblewrap present but cannot create namespaces here")
    return candidate


def _process_level(why):
    return Isolation("process", sys.executable, drop_to_nobody=False, notes=why)


def bubblewrap_command(isolation, worker_dir, submission_dir, python_args):
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
        "--proc", "/proc",
        "--dev", "/dev",
        "--tmpfs", "/tmp",
        "--ro-bind", str(worker_dir), "/grader-worker",
        "--chdir", "/tmp",
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
    if submission_dir is not None:
        command += ["--ro-bind", str(submission_dir), "/submission"]
    if isolation.drop_to_nobody:
        command += ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--no-new-privs"]
    return command + [isolation.python, "-I", *python_args]


def worker_command(isolation, submission_file, reply_fd, limits_json, module_name="tiny_autograd"):
    """(argv, cwd) that start a worker for `submission_file` (a prepared .py file in its own folder)."""
    submission_file = Path(submission_file)
    if isolation.level == "bubblewrap":
        inside = f"/submission/{submission_file.name}"
        args = ["/grader-worker/main.py", inside, module_name, str(reply_fd), limits_json]
        return bubblewrap_command(isolation, WORKER_DIR, submission_file.parent, args), None
    args = [str(WORKER_DIR / "main.py"), str(submission_file), module_name, str(reply_fd), limits_json]
    return [isolation.python, "-I", *args], str(submission_file.parent)
