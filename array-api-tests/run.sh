#!/usr/bin/env bash
# Run data-apis/array-api-tests against array_namespace. See README.md in this folder.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${ARRAY_API_TESTS_DIR:?set ARRAY_API_TESTS_DIR to a checkout of data-apis/array-api-tests}"
cd "$ARRAY_API_TESTS_DIR"
# this checkout's src/ first, so the run tests these sources even where another copy is installed
export PYTHONPATH="$here/../src${PYTHONPATH:+:$PYTHONPATH}"
export ARRAY_API_TESTS_MODULE=array_namespace
export ARRAY_API_TESTS_VERSION="${ARRAY_API_TESTS_VERSION:-2025.12}"
exec python3 -m pytest array_api_tests -p no:warnings \
    --max-examples "${MAX_EXAMPLES:-100}" --hypothesis-seed 0 --disable-deadline \
    --xfails-file "$here/xfails.txt" "$@"
