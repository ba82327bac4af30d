"""Feedback a student can act on: what the grader says when a test fails.

* simulate.py  a trusted model of the exercise that can make known mistakes
* hints.toml   the catalog (data): rules, local rules, misconceptions and their models
* catalog.py   loads and validates the catalog
* matcher.py   shows a hint only when the submission's numbers are the mistake's numbers
* probes.py    small probe programs that tell apart explanations one program cannot
* snippet.py   a failing program as a script a student can paste and run
* refine.py    after a test has failed: evidence, hints and the smallest program

The localizer itself is grader/compare.py; the shrinker grader/shrink.py; the
reports grader/terminal.py and grader/html_report.py.
"""
