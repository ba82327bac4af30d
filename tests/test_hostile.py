"""The hostile corpus: every file in tests/hostile/ is an attack on the grader.

Each case is graded at each isolation level where the attack can be stopped
(and reported as skipped, with the reason, where it cannot; see
docs/SECURITY.md). Whatever the payload does, these guarantees must hold:

- a valid result (Gradescope and Classroom documents) within the time budget,
  recording the isolation level it was graded at;
- no more points than the honest code under the payload earns: payloads on the
  student template score 0, payloads on the reference at most full marks;
- no process it started survives the grading;
- the kit's files are unchanged, and nothing is planted next to them or the results;
- no secret of the grader's environment, no hidden-test source, no control
  characters and no more than the capped amount of output in the results.
"""

import ast
import functools
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from grader import cli, results, sandbox
from grader.worker_client import OUTPUT_CAP_BYTES, Limits

pytestmark = pytest.mark.slow  # `make test-fast` leaves it out: it grades many submissions or builds environments

KIT = Path(__file__).resolve().parent.parent
HOSTILE = KIT / "tests" / "hostile"
BASES = {
    "template": KIT / "student_template" / "tiny_autograd.py",
    "reference": KIT / "reference" / "tiny_autograd.py",
}
TEMPLATE_NOTEBOOK = KIT / "student_template" / "tiny_autograd.ipynb"
HIDDEN_SUITES = KIT / "grader" / "suites" / "hidden"
SECRET = "sk-test-" + uuid.uuid4().hex  # in the grader's environment as GRADER_TEST_SECRET

LIMITS = Limits(call_seconds=1, load_seconds=3, budget_seconds=10)
# Hangs and crashes: every program costs a timeout or a restart, so the budget decides.
HANG_LIMITS = Limits(call_seconds=0.5, load_seconds=1.5, budget_seconds=2)
# A crash must be told as a crash, not as the timeout it becomes when the C stack
# takes longer than a hang's limits to overflow on a loaded machine.
CRASH_LIMITS = Limits(call_seconds=5, load_seconds=5, budget_seconds=8)
SLACK_SECONDS = 30  # beyond the budget: start-up and the reference side, on a loaded machine
TEST_OUTPUT_CAP = 2000  # characters of one test's feedback
BUBBLEWRAP, UNPRIVILEGED, PROCESS = sandbox.LEVELS
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

# Why a level cannot stop an attack (the case is then reported as skipped).
SAME_USER = "the process level runs the worker as the grader's own user, who may {}"
SEES_FILES = "without namespaces the worker sees every world-readable file, so it may {}"
NETWORK = "without Landlock's TCP rules only the bubblewrap level has its own network namespace"
ROOT_READS_ALL = "the worker runs as root here, and root may read any process (PR_SET_DUMPABLE stops only other non-root users)"


@dataclass(frozen=True)
class Case:
    """One payload, and the levels it is graded at.

    Every case runs at the bubblewrap and the process level. The unprivileged
    level runs the process level's code with another uid, so it is tested where
    the uid makes the difference (`uid=True`)."""

    name: str  # the payload: tests/hostile/<name>.py (or .ipynb)
    base: str  # "template" (honest part earns 0) or "reference" (honest part earns everything)
    skip: dict = field(default_factory=dict)  # level -> why that level cannot stop it
    uid: bool = False  # also grade at the unprivileged level
    limits: Limits = field(default_factory=lambda: LIMITS)
    via: str = "grade"  # "grade" (in this process), "cli" (writes a results file), "subprocess"
    writes: bool = False  # aims at files: look for damage in every tracked file
    label: str = ""  # names a variant of the same payload
    # level -> (layer, why): the level stops it only with that confinement layer
    # (grader/worker/confine.py), which not every kernel offers.
    needs: dict = field(default_factory=dict)

    def __str__(self):
        name = self.name if self.via != "subprocess" else f"{self.name}-at-startup"
        return f"{name}-{self.label}" if self.label else name

    def levels(self):
        unprivileged = self.uid or UNPRIVILEGED in self.skip or UNPRIVILEGED in self.needs
        return [BUBBLEWRAP, *([UNPRIVILEGED] if unprivileged else []), PROCESS]


LANDLOCK_FILES, LANDLOCK_TCP, LANDLOCK_SIGNALS = "landlock files", "landlock tcp", "landlock signals"
REALISTIC = Limits(call_seconds=3, load_seconds=5, budget_seconds=30)

CASES = [
    # Forging the result.
    Case("forge_results_then_exit", "template", via="cli", writes=True),
    Case("forge_results_daemon", "template", via="cli", writes=True),
    Case("patch_pytest", "template"),
    Case("conftest_into_kit", "template", writes=True, uid=True,
         needs={PROCESS: (LANDLOCK_FILES, SAME_USER.format("write into the kit's suites"))}),
    Case("exit_at_import", "template"),
    Case("forge_reply_channel", "template"),
    Case("forge_huge_reply", "template", limits=HANG_LIMITS),
    Case("stop_reading_requests", "template", limits=HANG_LIMITS),
    Case("search_disk_for_reference", "template",
         needs={UNPRIVILEGED: (LANDLOCK_FILES, SEES_FILES.format("read the reference if the kit is world-readable")),
                PROCESS: (LANDLOCK_FILES, SAME_USER.format("read the reference"))}),
    Case("leak_hidden_tests", "reference",
         needs={UNPRIVILEGED: (LANDLOCK_FILES, SEES_FILES.format("read the hidden suites if the kit is world-readable")),
                PROCESS: (LANDLOCK_FILES, SAME_USER.format("read the hidden suites"))}),
    # Hanging.
    Case("loop_at_import", "template", limits=HANG_LIMITS),
    Case("sleep_at_import", "template", limits=HANG_LIMITS),
    Case("loop_in_backward", "reference", limits=HANG_LIMITS),
    Case("loop_in_backward", "reference", limits=REALISTIC, label="realistic-limits"),
    Case("sleep_in_backward", "reference", limits=HANG_LIMITS),
    # Exhausting resources.
    Case("memory_hog", "reference"),
    Case("memory_across_processes", "reference", uid=True),
    # Starting 64 interpreters takes a while on a loaded machine: a longer load limit.
    Case("fork_flood", "reference", uid=True, limits=Limits(call_seconds=1, load_seconds=15, budget_seconds=20)),
    Case("daemon_grandchild", "reference", uid=True),
    Case("daemon_switches_uid", "reference", uid=True),
    Case("output_flood_stdout", "reference"),
    Case("output_flood_stderr_binary", "reference"),
    Case("huge_exception", "reference", limits=HANG_LIMITS),
    Case("lone_surrogates", "reference"),
    Case("lone_surrogates", "reference", via="cli"),
    Case("forge_surrogate_replies", "template", via="cli", limits=HANG_LIMITS),
    # Attacking the grader and its machine.
    Case("kill_parent", "reference", uid=True, needs={PROCESS: (LANDLOCK_SIGNALS, SAME_USER.format("kill the grader"))}),
    Case("killpg_own_group", "reference", limits=HANG_LIMITS),
    Case("kill_everything", "reference", uid=True,
         skip={PROCESS: "the payload refuses to kill(-1) as root"} if AS_ROOT else {},
         needs={PROCESS: (LANDLOCK_SIGNALS, SAME_USER.format("kill(-1) the grader and all its user's processes"))}),
    Case("read_environment", "reference"),
    Case("read_environment", "reference", via="subprocess", uid=True,
         skip={PROCESS: ROOT_READS_ALL} if AS_ROOT else {}),
    Case("snoop_grader", "reference", uid=True, needs={PROCESS: (LANDLOCK_FILES, ROOT_READS_ALL)} if AS_ROOT else {}),
    Case("network", "reference", needs={UNPRIVILEGED: (LANDLOCK_TCP, NETWORK), PROCESS: (LANDLOCK_TCP, NETWORK)}),
    Case("write_outside_tmp", "reference", writes=True, uid=True,
         needs={PROCESS: (LANDLOCK_FILES, SAME_USER.format("write wherever the grader can"))}),
    Case("append_to_grader", "reference", writes=True, uid=True,
         needs={PROCESS: (LANDLOCK_FILES, SAME_USER.format("append to the kit's files"))}),
    Case("notebook_magics", "template"),
    Case("symlink_to_reference", "template"),
    # Crashing.
    Case("keyboard_interrupt", "reference"),
    Case("recursion_crash", "reference", limits=CRASH_LIMITS),
    Case("poison_json", "reference", limits=HANG_LIMITS),
    Case("inherited_fds", "reference"),
]
# Not graded like the others (see their tests below): a grader killed from outside,
# and a pair of submissions where the first leaves something for the second.
SPECIAL_PAYLOADS = {"outlive_the_grader", "leave_state_behind", "pick_up_state"}


# ------------------------------------------------------------------ helpers


def isolation_for(level):
    try:
        return sandbox.detect(level)
    except sandbox.IsolationUnavailable as error:
        pytest.skip(f"the {level} level is not available on this machine: {error}")


def tracked_files():
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=KIT, capture_output=True, check=False)
    if listed.returncode != 0:  # not a git checkout: the kit's own folders
        return sorted(p for folder in ("grader", "reference", "student_template") for p in (KIT / folder).rglob("*")
                      if p.is_file() and "__pycache__" not in p.parts)
    return [KIT / name for name in listed.stdout.decode().split("\0") if name]


def fingerprint():
    prints = {}
    for path in tracked_files():
        try:
            prints[path] = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            prints[path] = None
    return prints


def damaged(before, after, marker):
    """Tracked files the payload changed: every write of the corpus carries its
    marker, and emptying or deleting a file is damage whoever did it (people may
    edit the kit while its tests run, so a changed hash alone proves nothing)."""
    damage = []
    for path, digest in before.items():
        if after.get(path) == digest:
            continue
        try:
            content = path.read_bytes()
        except OSError:
            damage.append(f"{path.relative_to(KIT)} (gone)")
            continue
        if marker.encode() in content or (digest is not None and not content):
            damage.append(str(path.relative_to(KIT)))
    return damage


def processes_with(marker):
    """(pid, command line) of every process whose command line holds `marker`."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as cmdline:
                text = cmdline.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in text:
            found.append((int(name), text[:200]))
    return found


def survivors(markers, seconds=5.0):
    """Processes still holding one of `markers` after `seconds` (killed, then reported)."""
    if not os.path.isdir("/proc"):
        return []
    deadline = time.monotonic() + seconds
    while True:
        left = [p for marker in markers for p in processes_with(marker)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for pid, _ in left:  # do not leave them running, even when the test fails
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return left


def strings_in(document):
    if isinstance(document, str):
        yield document
    elif isinstance(document, dict):
        for key, value in document.items():
            yield from strings_in(key)
            yield from strings_in(value)
    elif isinstance(document, list):
        for value in document:
            yield from strings_in(value)


@functools.lru_cache(maxsize=None)
def hidden_code_lines():
    """Code lines of the hidden suites (their docstrings, English and Chinese paragraphs,
    are shown as test descriptions by design)."""
    lines = set()
    for path in sorted(HIDDEN_SUITES.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        docstrings = set()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.Module, ast.FunctionDef)) and ast.get_docstring(node) is not None:
                docstrings.update(range(node.body[0].lineno, node.body[0].end_lineno + 1))
        for number, line in enumerate(source.splitlines(), 1):
            line = line.strip()
            if (number not in docstrings and len(line) >= 24 and not line.startswith(("#", '"', "'"))
                    and any(c in line for c in "=([")):
                lines.add(line)
    return lines


class MemorySampler:
    """The largest total resident memory of the processes holding `marker`, sampled every 20 ms."""

    def __init__(self, marker):
        self.marker, self.peak = marker, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self):
        while not self._stop.is_set():
            total = 0
            for pid, _ in processes_with(self.marker):
                try:
                    with open(f"/proc/{pid}/status") as status:
                        total += next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))
                except (OSError, StopIteration, ValueError):
                    pass
            self.peak = max(self.peak, total)
            self._stop.wait(0.02)

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=2)


class Listener:
    """A TCP listener on the grading machine's loopback that counts connections."""

    def __init__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(8)
        self.socket.settimeout(0.2)
        self.port = self.socket.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self):
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
                self.accepted += 1
                connection.close()
            except OSError:
                pass

    def close(self):
        self._stop.set()
        self._thread.join(timeout=2)
        self.socket.close()


# -------------------------------------------------------------- the run


@dataclass
class Outcome:
    level: str
    marker: str
    documents: list  # Gradescope (en, zh) and Classroom (en) results
    printed: str
    problem: str
    elapsed: float
    out_dir: Path


def build_submission(case, folder, values):
    """The base (template or reference) with the payload appended, placeholders filled."""
    def fill(text):
        for key, value in values.items():
            text = text.replace(f"@@{key}@@", str(value))
        return text

    if case.name == "symlink_to_reference":
        # A student repository can hold a symbolic link to where the kit lives on
        # the grading machine: the trusted side must not read through it.
        link = folder / "tiny_autograd.py"
        link.symlink_to(BASES["reference"])
        return folder
    if case.name == "notebook_magics":
        notebook = json.loads(TEMPLATE_NOTEBOOK.read_text(encoding="utf-8"))
        hostile = json.loads(fill((HOSTILE / "notebook_magics.ipynb").read_text(encoding="utf-8")))
        notebook["cells"] += hostile["cells"]
        path = folder / "tiny_autograd.ipynb"
        path.write_text(json.dumps(notebook, ensure_ascii=False), encoding="utf-8")
        return path
    payload = fill((HOSTILE / f"{case.name}.py").read_text(encoding="utf-8"))
    path = folder / "tiny_autograd.py"
    path.write_text(BASES[case.base].read_text(encoding="utf-8") + "\n\n" + payload, encoding="utf-8")
    return path


def run_case(case, level, tmp_path, monkeypatch, grade_submission):
    isolation = isolation_for(level)
    if level in case.needs and case.needs[level][0] not in isolation.confined:
        layer, why = case.needs[level]
        pytest.skip(f"{case} at the {level} level: {why}, unless the kernel offers {layer} (it does not here)")
    marker = f"hostile-{uuid.uuid4().hex[:16]}"
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    source_dir = tmp_path / "submission"
    source_dir.mkdir()
    listener = Listener() if case.name == "network" else None
    values = {"MARKER": marker, "OUT_DIR": out_dir, "KIT": KIT, "PORT": listener.port if listener else 0,
              "FORK_CAP": 2000 if level != PROCESS else 20}
    submission = build_submission(case, source_dir, values)
    monkeypatch.setenv("GRADER_TEST_SECRET", SECRET)
    before = fingerprint() if case.writes else None
    sampler = MemorySampler(marker) if case.name == "memory_across_processes" else None
    started = time.monotonic()
    try:
        if case.via == "grade":
            result = grade_submission(submission, suite="public", limits=case.limits, isolation=isolation)
            documents = [results.gradescope(result, "en"), results.gradescope(result, "zh"), results.classroom(result, "en")]
            printed, problem = result.printed, (result.problem or {}).get("en", "")
        else:
            documents = run_cli(case, level, submission, out_dir, monkeypatch)
            printed, problem = documents[0]["output"], ""
    finally:
        elapsed = time.monotonic() - started
        if listener:
            listener.close()
        if sampler:
            sampler.stop()
    outcome = Outcome(level, marker, documents, printed, problem, elapsed, out_dir)
    outcome.accepted_connections = listener.accepted if listener else 0
    outcome.isolation, outcome.limits = isolation, case.limits
    outcome.peak_bytes = sampler.peak if sampler else 0
    try:
        check_guarantees(case, outcome, isolation)
        if before is not None:
            changed = damaged(before, fingerprint(), marker)
            assert not changed, f"the payload changed the kit's files: {changed}"
    finally:
        undo_damage(marker)
    return outcome


def run_cli(case, level, submission, out_dir, monkeypatch):
    """Grade through the command line: the results file is what is checked."""
    out = out_dir / "results.json"
    argv = ["grade", str(submission), "--suite", "public", "--out", str(out), "--quiet", "--lang", "en"]
    if case.via == "cli":
        monkeypatch.setenv("GRADER_ISOLATION", level)
        assert cli.main(argv) == 0
    else:
        # A fresh grader process with the secret in its start-up environment, where
        # /proc/<pid>/environ shows it to anyone allowed to read that process.
        env = {**os.environ, "GRADER_ISOLATION": level, "GRADER_TEST_SECRET": SECRET}
        done = subprocess.run([sys.executable, "-m", "grader", *argv], cwd=KIT, env=env,
                              capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    time.sleep(0.5)  # anything left behind would rewrite the results file by now
    gradescope = json.loads(out.read_text(encoding="utf-8"))
    return [gradescope]


def check_guarantees(case, outcome, isolation):
    documents = outcome.documents
    gradescope = documents[0]
    text = json.dumps(documents, ensure_ascii=False, allow_nan=False)

    # A valid result, within the time budget, saying how it was isolated.
    assert outcome.marker not in json.dumps(gradescope.get("extra_data", {})), "a forged results file"
    tests = gradescope["tests"]
    assert tests, "a result without tests"
    assert all(t["status"] in ("passed", "failed") and 0 <= t["score"] <= t["max_score"] for t in tests)
    assert gradescope["score"] == pytest.approx(sum(t["score"] for t in tests))
    for document in documents[2:]:  # Classroom: the reporter sums tests[].score
        assert document["tests"] and document["max_score"] >= 1
    assert gradescope["extra_data"]["isolation"].startswith(f"{outcome.level}: ")
    assert outcome.elapsed < case.limits.budget_seconds + case.limits.load_seconds + SLACK_SECONDS

    # No more points than the honest code under the payload.
    if case.base == "template":
        assert gradescope["score"] == 0, f"the payload earned {gradescope['score']} points on the template"
    else:
        assert gradescope["score"] <= gradescope["extra_data"]["max_score"]

    # No survivors: neither what the payload started nor this grader's workers.
    left = survivors([outcome.marker, sandbox.staged_worker_dir()])
    assert not left, f"processes survived the grading: {left}"

    # Nothing planted next to the kit or the results.
    planted = [p for folder in (KIT, KIT / "results", KIT / "grader" / "suites", *(KIT / "grader" / "suites").glob("*"),
                                outcome.out_dir)
               if folder.is_dir() for p in folder.iterdir() if outcome.marker in p.name]
    assert not planted, f"the payload planted files: {planted}"

    # No secret, no hidden tests, no escapes, capped output.
    assert SECRET not in text, "the grader's secret reached the results"
    assert "BEGIN SOLUTION" not in text, "the reference's source reached the results"
    leaked = [line for line in hidden_code_lines() if line in text]
    assert not leaked, f"hidden-test source reached the results: {leaked[:3]}"
    for document in documents:
        for string in strings_in(document):
            assert not any(ord(c) < 32 and c not in "\n\t" for c in string), f"a control character in {string[:80]!r}"
    assert len(outcome.printed) <= OUTPUT_CAP_BYTES + 200
    assert all(len(t["output"]) <= TEST_OUTPUT_CAP for t in tests), max(len(t["output"]) for t in tests)

    CHECKS.get(case.name, lambda outcome: None)(outcome)


def undo_damage(marker):
    """If a payload got through, leave the machine as it was (the test has failed already)."""
    for path in tracked_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if marker in text:
            path.write_text(text.replace(f"\n# {marker}\n", ""), encoding="utf-8")
    for folder in (KIT, KIT / "results", *(KIT / "grader" / "suites").glob("*"), Path("/tmp"), Path("/var/tmp"),
                   Path("/dev/shm")):
        if folder.is_dir():
            for path in folder.glob(f"*{marker}*"):
                path.unlink(missing_ok=True)


# ------------------------------------------------------ per-case checks


def _printed_lines(outcome, needle):
    return [line for line in outcome.printed.splitlines() if outcome.marker in line and needle in line]


def check_fork_flood(outcome):
    [line] = _printed_lines(outcome, "fork flood")
    counts = dict(part.split("=") for part in line.split()[-2:])
    if outcome.level == PROCESS:
        assert int(counts["started"]) <= 20  # bounded only by the payload's own cap
    else:
        # RLIMIT_NPROC holds for a non-root uid: the flood is refused early.
        assert counts["refused"] == "EAGAIN" and int(counts["started"]) <= Limits().processes


def check_memory(outcome):
    [line] = _printed_lines(outcome, "MiB at import")
    held = int(line.split("held")[1].split()[0])
    assert held <= LIMITS.memory_bytes // 2 ** 20, f"RLIMIT_AS did not hold: {held} MiB"


def check_hang_at_import(outcome):
    assert "timed out" in outcome.problem


def check_hang_in_backward(outcome):
    """A backward() that never returns costs the tests that call it, and names it;
    the forward-mode tests that do not call it keep their points, within the budget."""
    tests = outcome.documents[0]["tests"]
    reasons = " ".join(t["output"] for t in tests if t["status"] == "failed")
    assert "timed out" in reasons and "`Value.backward()`" in reasons
    dual_only = [t for t in tests if t["tags"] == ["forward_mode"] and "backward" not in t["name"]]
    assert dual_only and all(t["status"] == "passed" for t in dual_only), [t["name"] for t in dual_only]
    assert outcome.elapsed < outcome.limits.budget_seconds + 10


def check_no_reply_in_advance(outcome):
    """Replies written before the requests cannot answer them, and a worker that
    stops reading cannot block the grader: every test fails, and says why."""
    tests = outcome.documents[0]["tests"]
    assert all(t["status"] == "failed" for t in tests)
    assert outcome.marker not in " ".join(t["output"] for t in tests)  # no forged answer was taken


def check_surrogates(outcome):
    text = json.dumps(outcome.documents, ensure_ascii=False)
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in text)
    text.encode("utf-8")


def check_memory_across_processes(outcome):
    [line] = _printed_lines(outcome, "memory hogs")
    assert int(line.split("started=")[1]) >= 2, "the payload could not start its children"
    limit = outcome.limits.submission_memory_bytes if outcome.isolation.cgroups \
        else outcome.limits.memory_bytes * outcome.limits.processes
    assert outcome.peak_bytes <= limit * 1.05, f"{outcome.peak_bytes / 2**20:.0f} MiB held in all"


def check_daemon_switching_uid(outcome):
    if outcome.level == PROCESS and AS_ROOT:
        assert _printed_lines(outcome, "switched uid"), "the payload did not switch its uid"


def check_crash(outcome):
    """The interpreter dies of it (SIGSEGV), or, from Python 3.12 on, its C-stack
    guard turns it into a RecursionError: either way the tests fail and say so."""
    failed = [t["output"] for t in outcome.documents[0]["tests"] if t["status"] == "failed"]
    assert failed
    assert [r for r in failed if "SIGSEGV" not in r and "RecursionError" not in r] == []


def check_kill_parent(outcome):
    assert not _printed_lines(outcome, "sent SIG"), "a signal reached the grader"


def check_network(outcome):
    assert outcome.accepted_connections == 0
    assert not _printed_lines(outcome, "connected to")


def check_write_outside(outcome):
    places = [outcome.out_dir, KIT]
    if outcome.level == BUBBLEWRAP or LANDLOCK_FILES in outcome.isolation.confined:
        places += [Path("/tmp"), Path("/var/tmp"), Path("/dev/shm")]
    escaped = [p for folder in places if folder.is_dir() for p in folder.glob(f"escape-{outcome.marker}")]
    assert not escaped, f"the worker wrote outside its own /tmp: {escaped}"


def check_notebook(outcome):
    assert not list(outcome.out_dir.glob("magic-*")), "a shell or magic line of the notebook ran"


def check_symlink(outcome):
    assert "link" in outcome.problem


def check_fds(outcome):
    targets = [line.split("->", 1)[1].strip() for line in _printed_lines(outcome, "->")]
    assert targets, "the payload did not run"
    assert all(t.startswith(("pipe:", "/dev/null", "/proc/", "/memfd:grader-progress")) for t in targets), targets


CHECKS = {
    "fork_flood": check_fork_flood,
    "memory_hog": check_memory,
    "loop_at_import": check_hang_at_import,
    "sleep_at_import": check_hang_at_import,
    "loop_in_backward": check_hang_in_backward,
    "sleep_in_backward": check_hang_in_backward,
    "recursion_crash": check_crash,
    "kill_parent": check_kill_parent,
    "network": check_network,
    "write_outside_tmp": check_write_outside,
    "notebook_magics": check_notebook,
    "symlink_to_reference": check_symlink,
    "inherited_fds": check_fds,
    "stop_reading_requests": check_no_reply_in_advance,
    "lone_surrogates": check_surrogates,
    "forge_surrogate_replies": check_surrogates,
    "memory_across_processes": check_memory_across_processes,
    "daemon_switches_uid": check_daemon_switching_uid,
}


# ------------------------------------------------------------------ tests


def test_the_corpus_has_one_case_per_payload_file():
    payloads = {p.stem for p in HOSTILE.iterdir() if p.suffix in (".py", ".ipynb")}
    named = ({case.name for case in CASES} | SPECIAL_PAYLOADS) - {"symlink_to_reference"}
    assert payloads == named
    assert len({(c.name, c.via) for c in CASES}) >= 20


def _matrix():
    for case in CASES:
        for level in case.levels():
            marks = [pytest.mark.skip(reason=f"{case} at the {level} level: {case.skip[level]}")] \
                if level in case.skip else []
            yield pytest.param(case, level, id=f"{case}-{level}", marks=marks)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the corpus uses /proc to find survivors (Linux)")
@pytest.mark.parametrize(("case", "level"), list(_matrix()))
def test_hostile_submission_is_contained(case, level, tmp_path, monkeypatch, grade_submission):
    run_case(case, level, tmp_path, monkeypatch, grade_submission)


# ------------------------------------------- a grader killed from outside


def _descendants(pid):
    """(pid, start time) of every process below `pid`."""
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
                table[int(name)] = (int(fields[1]), int(fields[19]))
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = set(), {pid}
    while frontier:
        children = {p for p, (ppid, _) in table.items() if ppid in frontier and p not in found}
        found |= children
        frontier = children
    return {(p, table[p][1]) for p in found}


def _command_line(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().replace(b"\0", b" ").decode(errors="replace")[:150]
    except OSError:
        return "?"


def _alive(pid, start):
    """Still running (a zombie is not: it only waits to be collected by its parent,
    which may be this test process, a subreaper since an earlier test graded in it)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except OSError:
        return False
    if fields[0] == b"Z":
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        return False
    return int(fields[19]) == start


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the test reads /proc")
@pytest.mark.parametrize("level", sandbox.LEVELS)
def test_a_grader_killed_from_outside_leaves_no_process_behind(level, tmp_path):
    """outlive_the_grader.py clears its parent-death signal, keeps a child in its
    group and detaches a daemon; the grader is then SIGKILLed mid-run. Nothing
    of the worker may survive it, at any level: the namespace, the control
    group, the throwaway uid or the keeper ends them, not the worker's cooperation."""
    isolation_for(level)
    marker = f"hostile-{uuid.uuid4().hex[:16]}"
    case = Case("outlive_the_grader", "reference")
    folder = tmp_path / "submission"
    folder.mkdir()
    submission = build_submission(case, folder, {"MARKER": marker})
    env = {**os.environ, "GRADER_ISOLATION": level}
    grader = subprocess.Popen([sys.executable, "-m", "grader", "grade", str(submission), "--out",
                               str(tmp_path / "out" / "results.json"), "--quiet"], cwd=KIT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (processes_with(f"{marker}-daemon") and processes_with(f"{marker}-child")):
            assert grader.poll() is None and time.monotonic() < deadline, "the payload's processes never started"
            time.sleep(0.05)
        below = _descendants(grader.pid)
        grader.kill()
        grader.wait()
        deadline = time.monotonic() + 15
        while any(_alive(*p) for p in below) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [(p, _command_line(p)) for p, start in below if _alive(p, start)]
        assert not left, f"processes outlived the grader: {left}"
        assert not survivors([marker], seconds=0)
    finally:
        grader.kill()
        grader.wait()
        survivors([marker], seconds=0)


# ------------------------------------ what one worker leaves for the next


def _forget_state(marker):
    subprocess.run(["ipcrm", "-M", str(0x7A11)], capture_output=True, check=False)
    for path in (f"/dev/mqueue/{marker}", f"/tmp/state-{marker}", f"/var/tmp/state-{marker}",
                 f"/dev/shm/state-{marker}"):
        try:
            os.unlink(path)
        except OSError:
            pass


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="keyrings and System V IPC are Linux's")
@pytest.mark.parametrize("level", sandbox.LEVELS)
def test_nothing_a_worker_leaves_reaches_the_next_worker(level, tmp_path, grade_submission):
    """A correct submission hides its source in the kernel (keyring, System V
    shared memory, a POSIX message queue) and in world-readable files; a stub
    graded next looks for it there. It must find nothing and score 0."""
    isolation = isolation_for(level)
    if level == PROCESS and "seccomp" not in isolation.confined:
        pytest.skip("without seccomp the process level shares the grader's keyring and IPC")
    marker = f"hostile-{uuid.uuid4().hex[:16]}"
    try:
        outcomes = []
        for name, base in (("leave_state_behind", "reference"), ("pick_up_state", "template")):
            folder = tmp_path / name
            folder.mkdir()
            submission = build_submission(Case(name, base), folder, {"MARKER": marker})
            outcomes.append(grade_submission(submission, suite="public", limits=LIMITS, isolation=isolation))
        left, picked = outcomes
        assert left.score == left.max_score  # the honest part still earns its points
        [line] = [line for line in picked.printed.splitlines() if f"{marker} found" in line]
        assert line.endswith("found []"), f"the second worker found what the first left: {line}"
        assert picked.score == 0
    finally:
        _forget_state(marker)
