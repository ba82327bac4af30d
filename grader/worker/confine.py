"""Kernel restrictions the worker puts on itself before the submission loads.

    no-new-privs  no set-uid binary can give privileges back (required by both below)
    landlock      file access: read-only where the worker must read, writes only
                  where it is given a place, nothing else; no TCP bind or connect;
                  no signals to, and no ptrace or /proc snooping of, any process
                  outside the worker (Linux 5.13+; network 6.7+, signals 6.12+)
    seccomp       the system calls that keep state in the kernel beyond the
                  worker's life or reach other processes: keyrings, System V
                  IPC, POSIX message queues, ptrace, process_vm_* (x86_64, aarch64)

Once applied, none of these can be lifted by the process or anything it starts:
they are the kernel's, not the worker's. Each step that the kernel does not
offer is skipped; `confine` returns the names of those that hold. The grader
probes the same code once to learn what holds here (it never takes a worker's
word for it). Standard library only: this runs inside the sandbox.
"""

import ctypes
import os
import struct
import sys

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2

# ------------------------------------------------------------------ landlock

_SYS_LANDLOCK_CREATE_RULESET, _SYS_LANDLOCK_ADD_RULE, _SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_TRUNCATE, _IOCTL_DEV = 1 << 14, 1 << 15
# Every file-system right each Landlock ABI version knows (a ruleset must not name unknown ones).
_FS_RIGHTS = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1

_READ = _EXECUTE | _READ_FILE | _READ_DIR
_FILE_ONLY = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def landlock_abi():
    """The Landlock ABI version the kernel offers, 0 when none."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _libc().syscall(ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET), None, ctypes.c_long(0),
                                  ctypes.c_long(_LANDLOCK_CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(0, version)


def _landlock(readable, writable, abi):
    libc = _libc()
    fs_rights = _FS_RIGHTS[min(abi, 5)]
    attr = struct.pack("=QQQ", fs_rights, _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0,
                       _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL if abi >= 6 else 0)
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    buffer = ctypes.create_string_buffer(attr[:size], size)
    ruleset = libc.syscall(ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET), buffer, ctypes.c_long(size), ctypes.c_long(0))
    if ruleset < 0:
        return []
    try:
        for paths, rights in ((readable, _READ), (writable, fs_rights)):
            for path in paths:
                _allow(libc, ruleset, path, rights & fs_rights)
        if libc.syscall(ctypes.c_long(_SYS_LANDLOCK_RESTRICT_SELF), ctypes.c_long(ruleset), ctypes.c_long(0)) != 0:
            return []
    finally:
        os.close(ruleset)
    held = ["landlock files"]
    if abi >= 4:
        held.append("landlock tcp")
    if abi >= 6:
        held.append("landlock signals")
    return held


def _allow(libc, ruleset, path, rights):
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path that is not there needs no rule
    try:
        if not os.path.isdir(path):
            rights &= _FILE_ONLY
        rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
        libc.syscall(ctypes.c_long(_SYS_LANDLOCK_ADD_RULE), ctypes.c_long(ruleset),
                     ctypes.c_long(_LANDLOCK_RULE_PATH_BENEATH), rule, ctypes.c_long(0))
    finally:
        os.close(fd)


# ------------------------------------------------------------------- seccomp

_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_DENIED = {  # name: (x86_64, aarch64)
    "shmget": (29, 194), "shmat": (30, 196), "shmctl": (31, 195), "shmdt": (67, 197),
    "semget": (64, 190), "semop": (65, 193), "semctl": (66, 191), "semtimedop": (220, 192),
    "msgget": (68, 186), "msgsnd": (69, 189), "msgrcv": (70, 188), "msgctl": (71, 187),
    "mq_open": (240, 180), "mq_unlink": (241, 181), "mq_timedsend": (242, 182),
    "mq_timedreceive": (243, 183), "mq_notify": (244, 184), "mq_getsetattr": (245, 185),
    "add_key": (248, 217), "request_key": (249, 218), "keyctl": (250, 219),
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
}
_X32_BIT = 0x40000000
_BPF_LD_W_ABS, _BPF_JEQ_K, _BPF_JGE_K, _BPF_RET_K = 0x20, 0x15, 0x35, 0x06
_SECCOMP_RET_ALLOW, _SECCOMP_RET_ERRNO, _EPERM = 0x7FFF0000, 0x00050000, 1


def seccomp_program(machine):
    """The BPF filter: EPERM for the denied calls and for any other ABI (i386, x32)
    through which they could be reached under other numbers; everything else runs."""
    arch = _AUDIT_ARCH[machine]
    numbers = sorted({pair[0 if machine == "x86_64" else 1] for pair in _DENIED.values()})
    deny_at = 4 + (1 if machine == "x86_64" else 0) + len(numbers) + 1  # index of the EPERM return
    program = [(_BPF_LD_W_ABS, 0, 0, 4)]  # seccomp_data.arch
    program.append((_BPF_JEQ_K, 1, 0, arch))
    program.append((_BPF_RET_K, 0, 0, _SECCOMP_RET_ERRNO | _EPERM))
    program.append((_BPF_LD_W_ABS, 0, 0, 0))  # seccomp_data.nr
    if machine == "x86_64":
        program.append((_BPF_JGE_K, deny_at - len(program) - 1, 0, _X32_BIT))
    for number in numbers:
        program.append((_BPF_JEQ_K, deny_at - len(program) - 1, 0, number))
    program.append((_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW))
    program.append((_BPF_RET_K, 0, 0, _SECCOMP_RET_ERRNO | _EPERM))
    assert len(program) == deny_at + 1
    return program


def _seccomp():
    machine = os.uname().machine
    if machine not in _AUDIT_ARCH:
        return []
    program = seccomp_program(machine)
    filters = ctypes.create_string_buffer(b"".join(struct.pack("=HBBI", *insn) for insn in program))
    fprog = struct.pack("@HP", len(program), ctypes.addressof(filters))  # struct sock_fprog
    fprog_buffer = ctypes.create_string_buffer(fprog, len(fprog))
    if _libc().prctl(ctypes.c_int(_PR_SET_SECCOMP), ctypes.c_ulong(_SECCOMP_MODE_FILTER), fprog_buffer,
                     ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        return []
    return ["seccomp"]


# -------------------------------------------------------------------- all

def confine(readable=(), writable=()):
    """Apply every restriction the kernel offers; returns the names of those that hold.

    `readable`: paths the worker may read and execute (the interpreter, its code,
    its submission); `writable`: paths it may also write (its private /tmp)."""
    if not sys.platform.startswith("linux"):
        return []
    try:
        libc = _libc()
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return []
    except (OSError, AttributeError):
        return []
    held = ["no-new-privs"]
    abi = landlock_abi()
    if abi:
        try:
            held += _landlock(readable, writable, abi)
        except OSError:
            pass
    try:
        held += _seccomp()
    except (OSError, AttributeError, ValueError):
        pass
    return held


def readable_paths(python_prefixes, extra):
    """What a worker reads: the system's programs and libraries, the interpreter's
    prefixes, /proc (its own entries: Landlock keeps it out of other processes'),
    a few devices, and `extra` (its code and submission)."""
    system = ["/usr", "/bin", "/lib", "/lib32", "/lib64", "/sbin", "/proc", "/dev/null", "/dev/zero",
              "/dev/urandom", "/dev/random"]
    return [*system, *python_prefixes, *extra]
