"""Resource limits the worker sets on itself before the submission loads.

Where the OS does not honour a limit (macOS ignores RLIMIT_AS, Windows has no
`resource` module) the worker goes on without it and says which ones held.
On Linux the worker also asks to be killed when the grader dies, so that a
submission stuck in a loop or a sleep does not outlive a grader that crashed.

Nothing here can stop the submission from undoing what it is allowed to undo
(it runs in this very process): these are the limits of a well-behaved start.
The grader never relies on the worker's word about them.
"""

import os
import signal
import sys

try:
    import resource
except ImportError:  # Windows
    resource = None

# name in the limits dict -> resource constant name
LIMITS = {
    "cpu_seconds": "RLIMIT_CPU",
    "memory_bytes": "RLIMIT_AS",
    "file_bytes": "RLIMIT_FSIZE",
    "open_files": "RLIMIT_NOFILE",
    "processes": "RLIMIT_NPROC",
    "core_bytes": "RLIMIT_CORE",
}

_PR_SET_PDEATHSIG = 1


def apply_limits(limits):
    """Lower each hard and soft limit to the value asked; returns the names that held."""
    applied = []
    if resource is not None:
        for name, constant in LIMITS.items():
            if name not in limits or not hasattr(resource, constant):
                continue
            if _set_limit(getattr(resource, constant), int(limits[name]), name == "cpu_seconds"):
                applied.append(name)
    if _die_with_parent():
        applied.append("die_with_parent")
    return applied


def _set_limit(which, value, is_cpu):
    try:
        soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        # CPU: the soft limit sends SIGXCPU, the hard one a second later SIGKILL.
        new_hard = value + 1 if is_cpu and hard == resource.RLIM_INFINITY else value
        resource.setrlimit(which, (value, new_hard))
    except (ValueError, OSError):
        return False
    return True


def _die_with_parent():
    """Linux: SIGKILL this process when its parent exits. False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    parent = os.getppid()
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
            return False
    except (ImportError, OSError, AttributeError):
        return False
    if os.getppid() != parent:  # the parent was already gone before the request took effect
        os._exit(70)
    return True
