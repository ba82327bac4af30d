"""Finding and killing what a worker left behind (Linux; elsewhere these find nothing).

The grader makes itself a child subreaper, so that a worker's processes that
detach themselves (double fork, `setsid`) are re-parented to it instead of to
init, and non-dumpable, so that a worker of the same non-root user cannot read
its memory or environment. `sweep` then finds a worker's processes by what the
submission cannot change: descent from the worker, adoption by the grader
after the worker started, and (throwaway uids) the uid itself. A control group,
where there is one (grader/cgroups.py), finds them too.

Without namespaces, a throwaway uid may also have left files in the folders
every user may write; `remove_files_of` deletes them.
"""

import functools
import os
import shutil
import signal
import stat
import sys
import time
from dataclasses import dataclass

_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
# Folders every user may write to: where one worker could leave something for the next.
SHARED_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/run/lock", "/var/lock")
MAX_ENTRIES = 200_000  # a bound on one search of the shared folders


@functools.lru_cache(maxsize=None)
def _prctl():
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    prctl = libc.prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return prctl


_protections = set()
_protected_pid = [None]  # a forked child inherits this set but not the subreaper bit


def current_protections():
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
    protections = current_protections()
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


# ---------------------------------------------------------------- processes


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
        with open(f"/proc/{pid}/stat", "rb") as stat_file:
            raw = stat_file.read()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2:].split()
    try:
        return ProcessInfo(pid, int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]))
    except (IndexError, ValueError):
        return None


def _uids(pid):
    """Every uid of the process (real, effective, saved, file system), or empty."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"Uid:"):
                    return {int(value) for value in line.split()[1:5]}
    except (OSError, ValueError):
        pass
    return set()


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


def sweep(worker_pid, born_after, spare=(), uid=None, group_stopped=False, rounds=20):
    """Kill the worker `worker_pid` and every process it left behind; returns how many.

    Found by: its session and process group, descent from it, and, when this
    process is a subreaper, children adopted from it: born since `born_after`
    (boot clock ticks), outside our own session, and not in `spare` (our own
    children that are not this worker's), whatever uid they switched to. With a
    throwaway `uid`, every process that holds that uid is the worker's.
    Everything found is stopped first (a stopped process cannot fork) and then
    killed, until a scan finds nothing new; `group_stopped` says the caller has
    stopped the worker's process group already, so that a scan finding nothing
    else needs no second look."""
    me = os.getpid()
    my_session = os.getsid(0)
    adopt = "subreaper" in current_protections()
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
            elif uid is not None and uid in _uids(info.pid):
                new[info.pid] = info
            elif adopt and info.ppid == me and info.start >= born_after and info.pid not in spare \
                    and info.sid != my_session:
                new[info.pid] = info
        grew = True  # descendants of anything found (children not yet re-parented)
        while grew:
            grew = False
            for info in table.values():
                if info.pid not in new and info.pid not in found and info.pid != me \
                        and (info.ppid in roots or info.ppid in new):
                    new[info.pid] = info
                    grew = True
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


def kill_uid(uid, rounds=20):
    """Kill every process that holds `uid` (a throwaway uid: all of them are a worker's)."""
    found = {}
    for _ in range(rounds):
        new = {info.pid: info for info in process_table().values()
               if info.pid not in found and uid in _uids(info.pid)}
        if not new:
            break
        for info in new.values():
            _signal(info, signal.SIGSTOP)
        found.update(new)
    for info in found.values():
        _signal(info, signal.SIGKILL)
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


# --------------------------------------------------------------------- files


def remove_files_of(uid, folders=SHARED_FOLDERS):
    """Delete everything `uid` owns in the folders every user may write; returns how many.

    Only folders it could write are searched: world-writable ones and its own."""
    removed, seen = 0, 0
    stack = [folder for folder in folders if os.path.isdir(folder)]
    while stack and seen < MAX_ENTRIES:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_uid == uid:
                removed += 1
                if stat.S_ISDIR(info.st_mode):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    try:
                        os.unlink(entry.path)
                    except OSError:
                        pass
            elif stat.S_ISDIR(info.st_mode) and info.st_mode & 0o002:
                stack.append(entry.path)
    return removed
