"""The recipes of docs/ARCHITECTURE.md, followed on a scratch copy of the kit.

Adding an op: its method (with solution markers) in the reference, its entry in
grader/exercise.toml, and its name in the worker's dispatch; `python -m
authoring` then writes the template, the notebook, the suites' frozen examples
and the public plan. Everything else picks the op up from the table: the
generated programs, the expected numbers, the feedback's model, its probes and
its hints. Here the op is `sigmoid`, on Value and on Dual.

Adding a category: grader/rubric.toml and the tests' tags.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

pytestmark = pytest.mark.slow  # `make test-fast` leaves it out: it builds scratch copies of the kit

ROOT = Path(__file__).resolve().parent.parent
KIT = ("grader", "authoring", "reference", "student_template", "tests", "pyproject.toml")

VALUE_SIGMOID = '''\
    def sigmoid(self):
        s = 1.0 / (1.0 + math.exp(-self.data))
        out = Value(s, (self,), "sigmoid")

        def _backward():
            # BEGIN SOLUTION: S 形函数 / sigmoid: σ'(x) = s · (1 - s)，s 是输出 / s is the output
            self.grad += s * (1.0 - s) * out.grad
            # END SOLUTION

        out._backward = _backward
        return out

'''
VALUE_STUB = "raise NotImplementedError(\"TODO: S 形函数 / sigmoid: σ'(x) = s · (1 - s)，s 是输出 / s is the output\")"
DUAL_SIGMOID = '''

    def sigmoid(self):
        s = 1.0 / (1.0 + math.exp(-self.val))
        # BEGIN SOLUTION: S 形函数 / sigmoid: sigmoid(a + bε) = s + s · (1 - s) · b · ε
        der = s * (1.0 - s) * self.der
        # END SOLUTION
        return Dual(s, der)
'''
TABLE_ENTRY = '''
[ops.sigmoid]
arity = 1
written = "{a}.sigmoid()"
method = "sigmoid"
value = "1.0 / (1.0 + exp(-x))"
grad = ["t * (1.0 - t) * g"]
dual = true
der = "t * (1.0 - t) * dx"
name = { en = "sigmoid", zh = "S 形函数" }
probes = [[0.5]]
'''
RIGHT_RULE = "self.grad += s * (1.0 - s) * out.grad"
WRONG_RULES = {
    "input": "self.grad += self.data * (1.0 - self.data) * out.grad",  # the input where the output belongs
    "upstream": "self.grad += s * (1.0 - s)",  # forgets the gradient from above
}


def copy_kit(destination):
    for name in KIT:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, destination / name, ignore=shutil.ignore_patterns(
                "__pycache__", "*.pyc", ".hypothesis", ".pytest_cache", "expected"))
        else:
            shutil.copy2(source, destination / name)
    return destination


def edit(path, old, new, count=1):
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == count, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def run(kit, *args, check=True):
    """`python ARGS` in the scratch kit, with its own grader and authoring on the path."""
    done = subprocess.run([sys.executable, *args], cwd=kit, capture_output=True, text=True, timeout=600,
                          env={**_environment(), "PYTHONPATH": str(kit)})
    if check:
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def _environment():
    return {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "FEEDBACK_LANG")}


def grade(kit, submission, out):
    run(kit, "-m", "grader", "grade", str(submission), "--suite", "all", "--out", str(out), "--lang", "en")
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def with_sigmoid(tmp_path_factory):
    """A scratch kit with sigmoid added by the recipe, authored; and what the worker
    check said before the worker knew the op."""
    kit = copy_kit(tmp_path_factory.mktemp("add-op"))
    reference = kit / "reference" / "tiny_autograd.py"
    edit(reference, "    # ------------------------------------------------------------------\n    # 组合运算",
         VALUE_SIGMOID + "    # ------------------------------------------------------------------\n    # 组合运算")
    reference.write_text(reference.read_text(encoding="utf-8").rstrip("\n") + "\n" + DUAL_SIGMOID, encoding="utf-8")
    table = kit / "grader" / "exercise.toml"
    table.write_text(table.read_text(encoding="utf-8") + TABLE_ENTRY, encoding="utf-8")
    before_worker = run(kit, "-m", "pytest", "tests/test_exercise.py", "-q", "-k", "dispatch", check=False)
    edit(kit / "grader" / "worker" / "interpreter.py", 'METHODS = ("exp", "log", "tanh", "relu")',
         'METHODS = ("exp", "log", "tanh", "relu", "sigmoid")')
    run(kit, "-m", "authoring")
    return kit, before_worker


def test_the_worker_check_names_an_op_the_worker_lacks(with_sigmoid):
    _, before_worker = with_sigmoid
    assert before_worker.returncode != 0
    assert "does not dispatch the table's op(s) ['sigmoid']" in before_worker.stdout


def test_the_table_agrees_with_the_new_reference(with_sigmoid):
    """tests/test_exercise.py checks sigmoid's value, rule and derivative part against
    the reference; only its pin of the seed's Dual API knows the new op is new."""
    kit, _ = with_sigmoid
    done = run(kit, "-m", "pytest", "tests/test_exercise.py", "-v", "-k", "not the_graded_dual_api_is_the_seeds")
    for test in ("test_each_primitives_value_and_local_rule_are_the_references",
                 "test_each_dual_primitives_derivative_is_the_references"):
        assert f"{test}[sigmoid] PASSED" in done.stdout
    assert run(kit, "-m", "authoring", "--check").returncode == 0


def test_the_template_and_the_notebook_stub_sigmoid_with_its_hint(with_sigmoid):
    kit, _ = with_sigmoid
    template = (kit / "student_template" / "tiny_autograd.py").read_text(encoding="utf-8")
    value_part, dual_part = template.split("\nclass Dual")
    sigmoid = value_part.split("    def sigmoid(self):\n")[1].split("\n    def ")[0]
    assert "def _backward():" in sigmoid and VALUE_STUB in sigmoid and RIGHT_RULE not in template
    assert "def sigmoid(self):" in dual_part and "sigmoid(a + bε) = s + s · (1 - s) · b · ε" in dual_part
    assert "s * (1.0 - s) * self.der" not in dual_part

    notebook = nbformat.read(str(kit / "student_template" / "tiny_autograd.ipynb"), as_version=4)
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    text = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    assert VALUE_STUB in code and RIGHT_RULE not in code
    assert "`+ * ** exp log tanh relu sigmoid`" in text  # the intro's list of primitives
    assert "the ops' local rules: + * ** exp log tanh relu sigmoid\n%check ops" in code  # the check cell


def test_the_suites_generated_programs_use_sigmoid(with_sigmoid):
    kit, _ = with_sigmoid
    for suite in ("public", "hidden"):
        examples = json.loads((kit / "grader" / "suites" / suite / "examples.json").read_text(encoding="utf-8"))
        drawn = [step[0] for entry in examples["tests"].values() for example in entry["examples"]
                 for value in example.values() if isinstance(value, dict) for step in value["steps"]]
        assert "sigmoid" in drawn, suite
    plan = json.loads((kit / "grader" / "suites" / "public" / "plan.json").read_text(encoding="utf-8"))
    planned = [step[1] for test in plan["tests"] for check in test["checks"] for step in check["steps"]
               if step[0] == "op"]
    assert "sigmoid" in planned


def test_the_student_bundle_lists_sigmoid_and_grades_it_without_the_reference(with_sigmoid, tmp_path):
    """`make dist`: the README's lists of ops are the table's, and the bundle (whose table
    has no rules) gives the reference full marks from its recordings (it verifies that)."""
    kit, _ = with_sigmoid
    done = run(kit, "-m", "authoring.dist", "student", "--out", str(tmp_path / "student"))
    assert "verified: the bundle's grader gives the reference 100/100" in done.stdout
    readme = (tmp_path / "student" / "README.md").read_text(encoding="utf-8")
    assert readme.count("`+ * ** exp log tanh relu sigmoid`") == 2
    assert readme.count("`+ - * exp tanh sigmoid`") == 2
    with open(tmp_path / "student" / "grader" / "exercise.toml", "rb") as table:
        entry = tomllib.load(table)["ops"]["sigmoid"]
    assert entry["method"] == "sigmoid" and "grad" not in entry and "der" not in entry


def test_the_new_reference_gets_full_marks(with_sigmoid, tmp_path):
    kit, _ = with_sigmoid
    results = grade(kit, kit / "reference" / "tiny_autograd.py", tmp_path / "results.json")
    assert results["score"] == results["extra_data"]["max_score"] > 0
    assert results["extra_data"]["diagnoses"] == []


@pytest.mark.parametrize("mistake", sorted(WRONG_RULES))
def test_a_wrong_sigmoid_rule_loses_points_and_is_diagnosed_as_sigmoids(with_sigmoid, tmp_path, mistake):
    kit, _ = with_sigmoid
    submission = tmp_path / "tiny_autograd.py"
    source = (kit / "reference" / "tiny_autograd.py").read_text(encoding="utf-8")
    assert source.count(RIGHT_RULE) == 1
    submission.write_text(source.replace(RIGHT_RULE, WRONG_RULES[mistake]), encoding="utf-8")
    results = grade(kit, submission, tmp_path / "results.json")
    categories = results["extra_data"]["categories"]
    assert results["score"] < results["extra_data"]["max_score"]
    assert categories["gradients"]["score"] < categories["gradients"]["max_score"]
    assert categories["forward_mode"]["score"] == categories["forward_mode"]["max_score"]
    first = results["extra_data"]["diagnoses"][0]
    assert first["op"] == "sigmoid"
    if mistake == "upstream":  # the hint every primitive gets from the table
        assert first["id"] == "missing-upstream"
    assert "sigmoid" in json.dumps(first, ensure_ascii=False)


def test_a_new_category_is_graded_from_the_rubric_and_the_tags(tmp_path):
    """The category recipe: its points (and names) in grader/rubric.toml, and tests tagged with it."""
    kit = copy_kit(tmp_path / "kit")
    rubric = kit / "grader" / "rubric.toml"
    edit(rubric, "forward_mode = 25\n", "forward_mode = 25\nchain = 10\n")
    edit(rubric, 'forward_mode = { en = "forward mode", zh = "前向模式" }\n',
         'forward_mode = { en = "forward mode", zh = "前向模式" }\nchain = { en = "chain rule", zh = "链式法则" }\n')
    (kit / "grader" / "suites" / "public" / "test_public_chain.py").write_text('''\
"""Public tests of the chain rule through several ops."""

import pytest

from grader.program import Graph


@pytest.mark.category("chain")
def test_three_ops_in_a_row(engine):
    """A gradient passes through three ops in a row.

    梯度依次经过三个运算。
    """
    g = Graph()
    x = g.value(0.7)
    g.backward(((x * 2.0).tanh() + 1.0).exp())
    engine.check(g)
''', encoding="utf-8")
    run(kit, "-m", "authoring")  # the public plan holds the new test
    results = grade(kit, kit / "reference" / "tiny_autograd.py", tmp_path / "results.json")
    assert results["extra_data"]["categories"]["chain"] == {"score": 10.0, "max_score": 10.0}
    assert results["score"] == results["extra_data"]["max_score"] == 110.0
    [test] = [t for t in results["tests"] if t["tags"] == ["chain"]]
    assert test["max_score"] == 10.0
    plan = json.loads((kit / "grader" / "suites" / "public" / "plan.json").read_text(encoding="utf-8"))
    assert "public/test_public_chain.py::test_three_ops_in_a_row" in [t["nodeid"] for t in plan["tests"]]


def test_a_new_language_is_chosen_like_the_others_and_reads_as_english_until_translated(tmp_path):
    """The language recipe: its code in grader/i18n.py; then whatever is translated reads in it."""
    kit = copy_kit(tmp_path / "kit")
    edit(kit / "grader" / "i18n.py", 'LANGUAGES = ("en", "zh")', 'LANGUAGES = ("en", "zh", "fr")')
    edit(kit / "grader" / "rubric.toml", 'gradients = { en = "gradients", zh = "梯度" }',
         'gradients = { en = "gradients", zh = "梯度", fr = "gradients locaux" }')
    edit(kit / "grader" / "terminal.py", '"score": bilingual("Score", "得分"),',
         '"score": bilingual("Score", "得分", fr="Note"),')
    edit(kit / "grader" / "suites" / "public" / "test_public_gradients.py",
         "    tanh 的局部导数 1 - t²（t 是输出）要乘以上游传来的梯度。\n",
         "    tanh 的局部导数 1 - t²（t 是输出）要乘以上游传来的梯度。\n\n"
         "    La règle de tanh, 1 - t², multiplie le gradient venu d'en haut.\n")
    submission = tmp_path / "tiny_autograd.py"
    source = (kit / "reference" / "tiny_autograd.py").read_text(encoding="utf-8")
    submission.write_text(source.replace("self.grad += out.data * out.grad", "self.grad += self.data * out.grad"),
                          encoding="utf-8")
    out = tmp_path / "fr" / "results.json"
    done = run(kit, "-m", "grader", "grade", str(submission), "--out", str(out), "--lang", "fr",
               "--markdown", str(tmp_path / "fr" / "summary.md"))
    english = run(kit, "-m", "grader", "grade", str(submission), "--out", str(tmp_path / "en" / "results.json"),
                  "--lang", "en")
    assert "gradients locaux" in done.stdout + done.stderr and "Note " in done.stdout + done.stderr
    assert "Score " not in done.stdout + done.stderr
    assert "gradients locaux" in (tmp_path / "fr" / "summary.md").read_text(encoding="utf-8")
    results = json.loads(out.read_text(encoding="utf-8"))
    expected = json.loads((tmp_path / "en" / "results.json").read_text(encoding="utf-8"))
    assert results["score"] == expected["score"] < expected["extra_data"]["max_score"]
    assert [t["output"] for t in results["tests"]] == [t["output"] for t in expected["tests"]]  # English
    names = {t["name"].split(":")[0]: t["name"] for t in results["tests"]}
    assert names["test_tanh_with_upstream_factor"].endswith("La règle de tanh, 1 - t², multiplie le gradient "
                                                            "venu d'en haut.")
    assert names["test_exp_below_the_root"] == next(t["name"] for t in expected["tests"]
                                                    if t["name"].startswith("test_exp_below_the_root:"))
    assert "梯度" not in done.stdout + done.stderr and english.returncode == 0
    env = {**_environment(), "PYTHONPATH": str(kit), "FEEDBACK_LANG": "", "LC_ALL": "fr_FR.UTF-8"}
    by_locale = subprocess.run([sys.executable, "-c", "from grader.cli import default_lang; print(default_lang())"],
                               cwd=kit, capture_output=True, text=True, env=env, timeout=60)
    assert by_locale.stdout.strip() == "fr"
