"""Writing the grader's files where someone else may have been first.

Results may be asked for in a folder that others can write (`/tmp`, a shared
drive, a folder a worker running as another user could reach). A name there
may already be a symbolic link to one of the kit's files, a folder, or a file
of somebody else's. So every file the grader writes is created afresh, with
O_EXCL|O_NOFOLLOW, inside a private folder of its own made next to the target
(mode 0700, a random name), written through file descriptors only, and then
renamed over the target name: a link there is replaced, never followed; a
folder there is moved aside. Files are readable by the grader's user only
(0600); folders it creates are 0700. A path that passes through somebody
else's symbolic link, or ends in a folder that another user owns and may
change, is refused (`UnsafePath`): its owner could redirect what we write.
"""

import json
import os
import secrets
import stat
from pathlib import Path

from grader.text import encodable

FILE_MODE = 0o600
FOLDER_MODE = 0o700


class UnsafePath(OSError):
    """A place the grader must not write to (see the module docstring)."""


def _trusted_owner(uid):
    return uid in (os.geteuid(), 0)


def _check_path(path):
    """Refuse a path with a component that is another user's symbolic link."""
    current = Path(path.anchor or "/")
    for part in path.parts[1:]:
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            return
        if stat.S_ISLNK(info.st_mode) and not _trusted_owner(info.st_uid):
            raise UnsafePath(f"{current} is a symbolic link that belongs to another user")


def ensure_folder(path):
    """`path` (absolute) as an existing folder, created with its missing parents (0700) if needed."""
    path = Path(os.path.abspath(path))
    _check_path(path)
    missing = []
    probe = path
    while not os.path.lexists(probe):
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, FOLDER_MODE)
        except FileExistsError:
            pass
    _check_path(path)
    return path


def _open_folder(path):
    """A descriptor of the folder that will receive the file, checked through that descriptor."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    info = os.fstat(fd)
    if not _trusted_owner(info.st_uid) and info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
        os.close(fd)
        raise UnsafePath(f"{path} belongs to another user who may change it; choose another folder")
    return fd


def write_private(path, content):
    """Write `content` (str or bytes) to `path` as described above; returns the path."""
    path = Path(os.path.abspath(path))
    data = content if isinstance(content, bytes) else encodable(content)
    parent_fd = _open_folder(ensure_folder(path.parent))
    scratch = f".grader-{secrets.token_hex(8)}"
    try:
        os.mkdir(scratch, FOLDER_MODE, dir_fd=parent_fd)
        scratch_fd = os.open(scratch, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent_fd)
        try:
            fd = os.open("file", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         FILE_MODE, dir_fd=scratch_fd)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            _move_folder_aside(path.name, parent_fd)
            os.rename("file", path.name, src_dir_fd=scratch_fd, dst_dir_fd=parent_fd)
        finally:
            try:
                os.unlink("file", dir_fd=scratch_fd)
            except OSError:
                pass
            os.close(scratch_fd)
            os.rmdir(scratch, dir_fd=parent_fd)
    finally:
        os.close(parent_fd)
    return path


def write_json(path, data):
    """`data` as indented JSON (UTF-8, any text), written with `write_private`."""
    return write_private(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def _move_folder_aside(name, parent_fd):
    """A folder where the file must go cannot be replaced by rename: give it another name."""
    try:
        info = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        os.rename(name, f"{name}.in-the-way-{secrets.token_hex(4)}", src_dir_fd=parent_fd, dst_dir_fd=parent_fd)


def read_own(path, limit=64 * 1024 * 1024):
    """The text of a file the grader wrote earlier, or None: never through a link,
    never a file that someone else owns or could have written."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
            return None
        data = handle.read(limit + 1)
    if len(data) > limit:
        return None
    return data.decode("utf-8", errors="replace")
