"""Feedback a student can act on: what the grader says when a test fails.

The comparison (grader/compare.py) says where a run differs; everything here
explains it, and nothing here decides a score.

* explain.py   a difference as a Finding: forward value, exception, order, and
               the culprit of a gradient (reverse.py) or a derivative (forward.py)
* finding.py   the Finding: what is wrong, why, the program, the numbers
* wording.py   how numbers, sides, lists and orders read in both languages
* simulate.py  a trusted model of the exercise (from grader/exercise.toml) that
               can make known mistakes
* hints.toml   the catalog (data): rules, local rules, misconceptions and their models
* catalog.py   loads and validates the catalog
* matcher.py   shows a hint only when the submission's numbers are the mistake's numbers
* probes.py    small probe programs that tell apart explanations one program cannot
* shrink.py    the smallest program that fails the same way
* refine.py    after a test has failed: evidence, hints and the smallest program
* snippet.py   a failing program as a script a student can paste and run

The reports are grader/terminal.py, grader/html_report.py and grader/markdown.py.
"""
