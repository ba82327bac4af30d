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

.PHONY: grade test template check-template clean

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

# PYTEST_ARGS: e.g. a subset (.ci/run uses one on the oldest and newest Python).
test: $(VENV)/.dev-deps
	$(PY) -m pytest $(PYTEST_ARGS)

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
