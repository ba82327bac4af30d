#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder image.
# It installs Python, bubblewrap (the hardened sandbox, used when the container
# allows namespaces; otherwise the grader falls back and records the level in
# the results) and the grader's pinned requirements into a venv, with whatever
# `python3` the image has (Ubuntu 22.04: 3.10, 24.04: 3.12; 3.9 to 3.13 work).
# Then it grades the reference and fails the build unless it gets full marks.
#
# AUTOGRADER_ROOT (default /autograder) lets it run elsewhere, e.g. in a test;
# AUTOGRADER_SKIP_APT=1 skips apt-get (a test emulating an image's python3).
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
if [ "${AUTOGRADER_SKIP_APT:-0}" != 1 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        python3 python3-venv python3-pip bubblewrap >/dev/null
fi
echo "setting up the grader with $(command -v python3) ($(python3 --version 2>&1))"
# The reference and the hidden suites live in source/: no other user may read them.
chmod -R go-rwx "$ROOT/source"
python3 -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install -q --disable-pip-version-check --no-cache-dir \
    -r "$ROOT/source/requirements.txt"
# Smoke test: the reference must get full marks here, or the image fails to build.
# Its results stay in a private folder of the autograder root, deleted afterwards.
smoke="$ROOT/.setup-check"
rm -rf "$smoke"
mkdir -m 700 "$smoke"
trap 'rm -rf "$smoke"' EXIT
cd "$ROOT/source"
"$ROOT/venv/bin/python" -m grader grade reference/tiny_autograd.py --suite all \
    --out "$smoke/results.json" --quiet --lang en
"$ROOT/venv/bin/python" - "$smoke/results.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1], encoding="utf-8"))
maximum = results["extra_data"]["max_score"]
if not (maximum > 0 and results["score"] == maximum):
    sys.exit(f"the reference does not get full marks: {results['score']}/{maximum}")
print(f"the reference gets {results['score']}/{maximum}: the autograder is ready")
PY
