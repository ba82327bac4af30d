"""Every part that stands in for another implements the interface the grading run
declares (grader/protocols.py, grader/oracle.py): a runner that lost a method
would otherwise fail only on the rare path that calls it."""

import pytest

from grader.engine import Engine
from grader.grading import DeadWorker
from grader.kernel_runner import KernelRunner
from grader.oracle import Oracle
from grader.oracle_recorded import RecordedOracle, RecordingOracle
from grader.oracle_reference import ReferenceOracle, SimulatedOracle
from grader.protocols import GradedWorker, ProgramRunner, SuiteEngine
from grader.replay import _Recorder
from grader.worker_client import Limits, Worker
from grader import sandbox


def test_the_sandboxed_worker_and_the_dead_one_are_graded_workers(tmp_path):
    submission = tmp_path / "tiny_autograd.py"
    submission.write_text("")
    worker = Worker(submission, Limits(), sandbox.detect())  # never started: only its shape is checked
    assert isinstance(worker, GradedWorker)
    assert isinstance(DeadWorker("syntax error"), GradedWorker)
    assert DeadWorker("syntax error").load_report is None


def test_a_notebook_kernel_runs_programs_like_a_worker():
    class Value:
        pass

    assert isinstance(KernelRunner({"Value": Value}), ProgramRunner)


def test_the_engine_and_the_plan_recorder_are_suite_engines():
    engine = Engine(DeadWorker("cannot load"), ReferenceOracle())
    assert isinstance(engine, SuiteEngine)
    assert isinstance(_Recorder(), SuiteEngine)


def test_a_recorder_hands_a_finding_back_unchanged():
    finding = object()
    assert _Recorder().refine(finding) is finding


@pytest.mark.parametrize("make", [ReferenceOracle, SimulatedOracle, RecordingOracle], ids=lambda m: m.__name__)
def test_the_kits_oracles_answer_the_oracle_protocol(make):
    assert isinstance(make(), Oracle)


def test_the_bundles_recorded_oracle_answers_the_oracle_protocol(tmp_path):
    recording = RecordingOracle()
    recording.expected([["leaf", 2.0], ["read", 0]])
    recording.save(tmp_path / "public.json", "public")
    assert isinstance(RecordedOracle([tmp_path / "public.json"]), Oracle)


def test_a_runner_without_run_is_not_a_program_runner():
    class Silent:
        def printed(self):
            return ""

    assert not isinstance(Silent(), ProgramRunner)
