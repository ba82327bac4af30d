"""The worker: the only process that ever runs student code.

    python -I main.py SUBMISSION MODULE_NAME REPLY_FD SETTINGS_JSON

It sets its own resource limits and kernel confinement, loads the submission,
then answers graph programs read from stdin with one JSON line each on
REPLY_FD. Before each step of a program it writes the request's id and the
step's number into a small shared page (SETTINGS' `progress_fd`), so that when
a program never returns the grader can tell which call hung. Everything the
submission prints goes to stdout/stderr, which the grader drains and caps; it
never reaches the reply channel.

Nothing here is trusted: the submission shares this process and may rewrite any
of it. The grader treats every reply (and the progress page) as untrusted data.
"""

import json
import mmap
import os
import struct
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from confine import confine, readable_paths  # noqa: E402
from functions import definitions, exercise_functions, owners  # noqa: E402
from interpreter import Interpreter, short  # noqa: E402
from limits import apply_limits  # noqa: E402
from placeholders import install as install_placeholders  # noqa: E402

del sys.path[0]

REQUIRED = ("Value", "zero_grad", "Dual")
PROGRESS = struct.Struct("=QI")  # request id, step number


def send(channel, message):
    # What the submission printed so far reaches the grader's capped log first:
    # the worker is killed, never asked to exit, so its buffers are never flushed.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: B036 - the submission may have replaced the stream
            pass
    channel.write(json.dumps(message, allow_nan=False) + "\n")
    channel.flush()


def load(path, module_name):
    """Execute the submission as module `module_name`. Returns (namespace, error)."""
    with open(path, encoding="utf-8") as source_file:
        source = source_file.read()
    module = types.ModuleType(module_name)
    module.__file__ = path
    sys.modules[module_name] = module
    try:
        code = compile(source, path, "exec")
        exec(code, module.__dict__)
    except BaseException as error:  # noqa: B036 - SystemExit and KeyboardInterrupt too
        return None, describe_load_error(error, path)
    return module.__dict__, None


def describe_load_error(error, path):
    line = getattr(error, "lineno", None) if isinstance(error, SyntaxError) else None
    if line is None:
        frames = _frames(error.__traceback__)
        in_submission = [lineno for filename, lineno in frames if filename == path]
        line = in_submission[-1] if in_submission else None
    try:
        message = str(error)
    except BaseException:  # noqa: B036
        message = ""
    return {"type": short(type(error).__name__, 80), "message": short(message), "line": line}


def _frames(tb):
    while tb is not None:
        yield tb.tb_frame.f_code.co_filename, tb.tb_lineno
        tb = tb.tb_next


def progress_writer(fd):
    """A function that records (request id, step) in the shared page, or None."""
    if fd is None:
        return None
    try:
        page = mmap.mmap(fd, PROGRESS.size)
    except (OSError, ValueError):
        return None
    return lambda request, step: PROGRESS.pack_into(page, 0, request, step)


def serve(namespace, requests, channel, path, progress, functions):
    interpreter = Interpreter(namespace, source_file=path, owners=owners(functions))
    for line in requests:
        request = json.loads(line)
        number = request["id"]
        on_step = (lambda step: progress(number, step)) if progress else None
        send(channel, {"id": number, "outcome": interpreter.run(request["steps"], on_step=on_step)})


def main(argv):
    path, module_name, reply_fd, settings = argv[1], argv[2], int(argv[3]), json.loads(argv[4])
    channel = os.fdopen(reply_fd, "w", encoding="utf-8")
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    # The submission gets an empty stdin: reading input() must not eat requests.
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    applied = apply_limits(settings.get("limits", {}))
    install_placeholders(settings.get("allowed_imports", ()))
    prefixes = sorted({os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, sys.exec_prefix)})
    if settings.get("confine", True):
        applied += confine(readable_paths(prefixes, settings.get("readable", [])), settings.get("writable", []))
    progress = progress_writer(settings.get("progress_fd"))
    namespace, error = load(path, module_name)
    if error:
        send(channel, {"ready": False, "load_error": error, "limits": applied})
        return
    missing = [name for name in REQUIRED if name not in namespace]
    functions = exercise_functions(namespace, path)
    send(channel, {"ready": True, "missing": missing, "limits": applied, "defined": definitions(functions)})
    serve(namespace, requests, channel, path, progress, functions)


if __name__ == "__main__":
    main(sys.argv)
