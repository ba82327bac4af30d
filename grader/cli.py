"""python -m grader grade SUBMISSION [--suite public|hidden|all] [--out FILE]
                                   [--format gradescope|classroom|junit|prairielearn] [--lang zh|en]
                                   [--html FILE] [--markdown FILE] [--graded-file NAME]
python -m grader batch DIR [--out grades.csv] [--jobs N] [--suite all|public|hidden] (see grader/batch.py)

Exit 0 whenever a results file was written, whatever the score; non-zero only
when the grader itself could not run.
"""

import argparse
import locale
import os
import sys
from pathlib import Path

from grader import batch, files, html_report, markdown, results, sandbox, terminal
from grader.grading import SUITES, grade
from grader.i18n import DEFAULT, LANGUAGES
from grader.submission import GRADED_FILES


def default_lang():
    chosen = os.environ.get("FEEDBACK_LANG", "").strip().lower()
    if chosen in LANGUAGES:
        return chosen
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(variable)
        if value:
            return _of_locale(value)
    return _of_locale(locale.getlocale()[0] or "")


def _of_locale(name):
    """The kit's language a locale name starts with ("zh_CN.UTF-8": zh), else the default."""
    return next((code for code in LANGUAGES if name.lower().startswith(code)), DEFAULT)


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m grader", description="Grade tiny-autograd submissions.")
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("grade", help="grade one submission (.py, .ipynb, or a folder)")
    one.add_argument("submission")
    one.add_argument("--suite", choices=SUITES, default="public")
    one.add_argument("--out", default="results/results.json", help="results file (default: %(default)s)")
    one.add_argument("--format", choices=list(results.FORMATS), default="gradescope")
    one.add_argument("--lang", choices=LANGUAGES, default=None,
                     help="feedback language (default: $FEEDBACK_LANG, else from the locale)")
    one.add_argument("--graded-file", choices=GRADED_FILES, default=GRADED_FILES[0],
                     help="when SUBMISSION is a folder holding both, the file to grade (default: %(default)s)")
    one.add_argument("--quiet", action="store_true", help="no terminal summary")
    one.add_argument("--html", metavar="FILE", default=None,
                     help="also write a self-contained HTML report with a picture of each failing graph")
    one.add_argument("--markdown", metavar="FILE", default=None,
                     help="also write the feedback as Markdown (the Classroom workflow's step summary)")
    many = commands.add_parser("batch", help="grade every submission in a folder into a CSV gradebook")
    batch.add_arguments(many)
    many.add_argument("--suite", choices=SUITES, default="all",
                      help="the tests to grade with (default: %(default)s, the official grade with the hidden tests)")
    many.add_argument("--lang", choices=LANGUAGES, default=None, help="feedback language (default: from the locale)")
    return parser




def write_document(path, document):
    """A results document: JSON, or text as it is (the JUnit XML)."""
    if isinstance(document, str):
        return files.write_private(path, document)
    return files.write_json(path, document)


def say(message):
    print(f"grader: {message}", file=sys.stderr)


def main(argv=None):
    args = build_parser().parse_args(argv)
    lang = args.lang or default_lang()
    try:
        isolation = sandbox.detect()
    except sandbox.IsolationUnavailable as error:
        say(f"cannot grade safely here: {error}")
        return 2
    if args.command == "batch":
        return batch.main(args, lang)
    out = Path(args.out)
    result = grade(args.submission, suite=args.suite, isolation=isolation, graded_file=args.graded_file)
    try:
        write_document(out, results.FORMATS[args.format](result, lang))
    except OSError as error:
        say(f"could not write the results to {out}: {error}")
        return 1
    # The debugging copy and the reports come second: a problem with them never costs the results.
    extras = [(out.with_name(out.stem + ".pytest.json"), lambda path: files.write_json(path, result.raw_report))]
    if args.html:
        extras.append((Path(args.html), lambda path: html_report.write(result, path, lang)))
    if args.markdown:
        extras.append((Path(args.markdown), lambda path: files.write_private(path, markdown.summary(result, lang))))
    for path, write in extras:
        try:
            write(path)
        except OSError as error:
            say(f"could not write {path}: {error}")
    if not args.quiet:
        terminal.summary(result, lang, out, html_path=args.html)
    return 0


if __name__ == "__main__":
    sys.exit(main())
