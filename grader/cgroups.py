"""Control groups: one per submission, so that its processes can be bounded and found.

A submission's workers (the graded one, its restarts, the feedback worker) all
run in one control group whose limits are the submission's: total memory
(swap included) and total tasks. Each worker has a child group of its own, so
that ending it kills exactly its processes, however they detached themselves
or whichever uid they switched to: a process cannot leave its group without
write access to another group's `cgroup.procs`, which only root has.

Both kernels' interfaces are used: cgroup v2 (one hierarchy; `memory.max`,
`pids.max`, `cgroup.kill`) where the memory and pids controllers can be
enabled for a group we may create, else cgroup v1 (the `memory` and `pids`
hierarchies, as root). Where neither is usable (an unprivileged user without
delegation, macOS), `Box.create` returns None and the other layers stand alone.

Processes join a group through a tiny shell prefix (`enter_command`) that
writes its own pid into the group's `cgroup.procs` files and then execs the
worker's command: the worker is in its group before any of its code runs.
"""

import functools
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

PREFIX = "tiny-autograd-"
_JOIN = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
JOIN_FAILED = 125  # the shell prefix's exit status when it could not join the group


@dataclass(frozen=True)
class Hierarchy:
    version: int
    bases: tuple  # where our groups go: one folder (v2), or the memory and pids folders (v1)


def _mounts():
    """(filesystem type, mount point, super options, root of the mount) of every mount."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as mountinfo:
            lines = mountinfo.read().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 3:
            found.append((tail[0], fields[4].replace("\\040", " "), tail[2], fields[3]))
    return found


def _own_paths():
    """{controller or "": our cgroup path} from /proc/self/cgroup."""
    paths = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as cgroup:
            for line in cgroup:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                for name in controllers.split(",") if controllers else [""]:
                    paths[name] = path
    except (OSError, ValueError):
        pass
    return paths


def _writable_folder(path):
    return os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK)


def _v2_base():
    for fstype, mount, _options, root in _mounts():
        if fstype != "cgroup2":
            continue
        own = _own_paths().get("")
        if own is None:
            continue
        # Our own group holds processes (us), so limits must go into a group
        # beside it: walk up to an ancestor that already enables both controllers
        # for its children (or is the root, which may enable them).
        relative = os.path.relpath(own, root) if root != "/" else own.lstrip("/")
        candidate = Path(mount) / relative
        while True:
            candidate = candidate.parent if candidate != Path(mount) else candidate
            subtree = _read(candidate / "cgroup.subtree_control").split()
            if {"memory", "pids"} <= set(subtree) and _writable_folder(candidate):
                return candidate
            if candidate == Path(mount):
                available = _read(candidate / "cgroup.controllers").split()
                if {"memory", "pids"} <= set(available) and _writable_folder(candidate):
                    try:
                        _write(candidate / "cgroup.subtree_control", "+memory +pids")
                        return candidate
                    except OSError:
                        return None
                return None
    return None


def _v1_bases():
    bases = {}
    own = _own_paths()
    for fstype, mount, options, root in _mounts():
        if fstype != "cgroup":
            continue
        for controller in ("memory", "pids"):
            if controller in options.split(",") and controller not in bases:
                path = own.get(controller, "/")
                relative = os.path.relpath(path, root) if root != "/" else path.lstrip("/")
                base = Path(mount) / relative
                if _writable_folder(base):
                    bases[controller] = base
    if set(bases) == {"memory", "pids"}:
        return bases["memory"], bases["pids"]
    return None


@functools.lru_cache(maxsize=None)
def hierarchy():
    """The usable hierarchy here, or None. Probed by making (and removing) a group."""
    if not os.path.isdir("/sys/fs/cgroup"):
        return None
    for version, bases in ((2, _v2_base()), (1, _v1_bases())):
        if not bases:
            continue
        bases = (bases,) if version == 2 else bases
        probe = [base / f"{PREFIX}probe-{os.getpid()}-{secrets.token_hex(3)}" for base in bases]
        try:
            for folder in probe:
                folder.mkdir()
            return Hierarchy(version, tuple(bases))
        except OSError:
            continue
        finally:
            for folder in probe:
                try:
                    folder.rmdir()
                except OSError:
                    pass
    return None


def _read(path):
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _write(path, text):
    with open(path, "w") as handle:
        handle.write(text)


class Group:
    """One control group (a folder per hierarchy) that we made."""

    def __init__(self, folders):
        self.folders = tuple(folders)

    def enter_command(self, command):
        """`command`, started so that it runs inside this group."""
        procs = [str(folder / "cgroup.procs") for folder in self.folders]
        return ["/bin/sh", "-c", _JOIN, "sh", *procs, "--", *command]

    def key(self):
        """The group as one line of text (the keeper's registry): its folders, joined by ':'."""
        return ":".join(str(folder) for folder in self.folders)

    def pids(self):
        found = set()
        for folder in self.folders:
            for path in folder.rglob("cgroup.procs"):
                found.update(int(pid) for pid in _read(path).split() if pid.isdigit())
        return found

    def kill(self, seconds=2.0):
        """Kill every process in the group and its children; True when it is empty."""
        kill_file = self.folders[0] / "cgroup.kill"
        if kill_file.exists():
            try:
                _write(kill_file, "1")
            except OSError:
                pass
        deadline = time.monotonic() + seconds
        while True:
            left = self.pids()
            if not left:
                return True
            if time.monotonic() > deadline:
                return False
            for pid in left:  # a process forked since the last look is found in the next round
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.005)

    def remove(self, seconds=1.0):
        """Remove the (emptied) group, its children first."""
        deadline = time.monotonic() + seconds
        for folder in self.folders:
            children = sorted((p for p in folder.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True)
            for path in [*children, folder]:
                while True:
                    try:
                        path.rmdir()
                        break
                    except FileNotFoundError:
                        break
                    except OSError:
                        if time.monotonic() > deadline:
                            break
                        time.sleep(0.01)


class Box(Group):
    """The group of one submission, with its limits; workers get child groups."""

    @classmethod
    def create(cls, memory_bytes, tasks):
        found = hierarchy()
        if found is None:
            return None
        name = f"{PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
        folders = [base / name for base in found.bases]
        try:
            for folder in folders:
                folder.mkdir(mode=0o755)
            box = cls(folders)
            box.version = found.version
            box._limit(memory_bytes, tasks)
        except OSError:
            Group(folders).remove()
            return None
        return box

    def _limit(self, memory_bytes, tasks):
        if self.version == 2:
            folder = self.folders[0]
            _write(folder / "memory.max", str(memory_bytes))
            for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                if (folder / name).exists():
                    _write(folder / name, value)
            _write(folder / "pids.max", str(tasks))
        else:
            memory, pids = self.folders
            _write(memory / "memory.limit_in_bytes", str(memory_bytes))
            if (memory / "memory.memsw.limit_in_bytes").exists():
                _write(memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
            _write(pids / "pids.max", str(tasks))

    def worker_group(self):
        name = f"w{secrets.token_hex(4)}"
        folders = [folder / name for folder in self.folders]
        for folder in folders:
            folder.mkdir(mode=0o755)
        return Group(folders)

    def describe(self):
        return f"cgroup v{self.version}"
