#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder image.
# It installs Python, bubblewrap (the hardened sandbox, used when the container
# allows namespaces; otherwise the grader falls back and records the level in
# the results) and the grader's pinned requirements into a venv.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
if command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        python3 python3-venv python3-pip bubblewrap >/dev/null
fi
python3 -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install -q --disable-pip-version-check -r "$ROOT/source/requirements.txt"
# Smoke test at build time: the reference must get full marks here, or the image fails to build.
# Its results name every hidden test: they stay in a private folder of the kit and are deleted.
cd "$ROOT/source"
chmod -R go-rwx "$ROOT/source"
smoke="$(mktemp -d "$ROOT/source/.smoke-test.XXXXXX")"
trap 'rm -rf "$smoke"' EXIT
"$ROOT/venv/bin/python" -m grader grade reference/tiny_autograd.py --suite all --out "$smoke/results.json" --quiet
"$ROOT/venv/bin/python" -c 'import json, sys; r = json.load(open(sys.argv[1])); m = r["extra_data"]["max_score"]; sys.exit(0 if m > 0 and r["score"] == m else "the reference does not get full marks: %s/%s" % (r["score"], m))' "$smoke/results.json"
