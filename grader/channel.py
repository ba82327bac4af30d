"""The pipes to and from a worker, where every wait has a deadline.

A worker may stop reading (so that a blocking write would wait forever), shrink
its pipes, send half a line, or flood. `send` writes a request without ever
blocking past its deadline; `LineReader.read_line` reads one reply line the
same way and refuses oversized ones. Both say why they gave up in a short text.
"""

import errno
import os
import select
import time

try:
    _POLL = select.poll
except AttributeError:  # pragma: no cover - Windows has no poll (and no worker)
    _POLL = None


def _wait(fd, for_writing, seconds):
    """True when `fd` is ready within `seconds`."""
    if seconds <= 0:
        return False
    if _POLL is not None:
        poller = _POLL()
        poller.register(fd, select.POLLOUT if for_writing else select.POLLIN)
        return bool(poller.poll(seconds * 1000))
    lists = ([], [fd], []) if for_writing else ([fd], [], [])
    return any(select.select(*lists, seconds))


def set_nonblocking(fd):
    os.set_blocking(fd, False)


def send(fd, data, deadline):
    """Write all of `data` to the non-blocking `fd` by `deadline` (time.monotonic());
    returns "" or why it could not."""
    view = memoryview(data)
    while view:
        if not _wait(fd, True, deadline - time.monotonic()):
            if time.monotonic() >= deadline:
                return "the worker stopped reading its requests"
            continue
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            continue
        except OSError as error:
            if error.errno == errno.EINTR:
                continue
            return "the worker process died before it could take the request"
        view = view[written:]
    return ""


class LineReader:
    """Reads newline-terminated messages from a pipe, at most `limit` bytes each."""

    def __init__(self, fd, limit):
        self.fd, self.limit, self.buffer = fd, limit, b""

    def read_line(self, deadline):
        """(line without its newline, "") or (None, why): "timeout", "eof", "oversized"."""
        while b"\n" not in self.buffer:
            if len(self.buffer) > self.limit:
                return None, "oversized"
            if not _wait(self.fd, False, deadline - time.monotonic()):
                if time.monotonic() >= deadline:
                    return None, "timeout"
                continue
            try:
                chunk = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                continue
            except OSError:
                return None, "eof"
            if not chunk:
                return None, "eof"
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        if len(line) > self.limit:
            return None, "oversized"
        return line, ""
