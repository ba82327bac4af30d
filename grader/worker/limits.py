"""Resource limits the worker sets on itself before the submission loads.

Where the OS does not honour a limit (macOS ignores RLIMIT_AS, Windows has no
`resource` module) the worker goes on without it and says which ones held.
"""

try:
    import resource
except ImportError:  # Windows
    resource = None

# name in the limits dict -> (resource constant name, how the value is given)
LIMITS = {
    "cpu_seconds": "RLIMIT_CPU",
    "memory_bytes": "RLIMIT_AS",
    "file_bytes": "RLIMIT_FSIZE",
    "open_files": "RLIMIT_NOFILE",
    "processes": "RLIMIT_NPROC",
    "core_bytes": "RLIMIT_CORE",
}


def apply_limits(limits):
    """Lower each hard and soft limit to the value asked; returns the names that held."""
    applied = []
    if resource is None:
        return applied
    for name, constant in LIMITS.items():
        if name not in limits or not hasattr(resource, constant):
            continue
        which = getattr(resource, constant)
        value = int(limits[name])
        try:
            soft, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            # CPU: the soft limit sends SIGXCPU, the hard one a second later SIGKILL.
            new_hard = value + 1 if name == "cpu_seconds" and hard == resource.RLIM_INFINITY else value
            resource.setrlimit(which, (value, new_hard))
            applied.append(name)
        except (ValueError, OSError):
            pass
    return applied
