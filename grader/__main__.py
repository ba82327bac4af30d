import gc

from grader.cli import main

code = main()
# Everything is written. Let the interpreter exit without the garbage
# collector's passes over every object of pytest during its
# teardown (about 0.15 s of each run; docs/PERFORMANCE.md). atexit handlers
# and the closing of files still run.
gc.freeze()
raise SystemExit(code)
