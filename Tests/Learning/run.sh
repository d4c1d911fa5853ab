#!/bin/bash
# Process-level tests of the learned-words store: the CLI (learn, list, forget, export, import,
# wipe, predict --user-db, privacy, damaged and newer stores, a CLI next to a running writer) and
# the crash test (kill -9 of a writer at 60 seeded random points). Final line: `N passed, N failed`;
# non-zero exit on a failure. Uses INKLING=path/to/inkling if set, else builds the release CLI
# (scratch path SCRATCH, default .build).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/Tests/Learning"
if [ -z "${INKLING:-}" ]; then
    SCRATCH=${SCRATCH:-$ROOT/.build}
    # The same flags as `make build`: a build without them would relink the packaged binaries.
    # Every product: the command-line conventions test runs the engine and the cloud helper too.
    (cd "$ROOT" && swift build -c release --static-swift-stdlib --scratch-path "$SCRATCH" >"${TMPDIR:-/tmp}/inkling-learning-build.log" 2>&1) || { tail -n 30 "${TMPDIR:-/tmp}/inkling-learning-build.log"; echo "0 passed, 1 failed"; exit 1; }
    INKLING="$(cd "$ROOT" && swift build -c release --static-swift-stdlib --scratch-path "$SCRATCH" --show-bin-path 2>/dev/null)/inkling"
fi
PACK=${PACK:-$ROOT/data/packs/en.inkpack}
WORK=$(mktemp -d /tmp/inkling-learning-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

passed=0
failed=0
run() {
    local name=$1
    shift
    local log="$WORK/$name.log"
    "$@" >"$log" 2>&1
    local status=$?
    grep -v '^PASS ' "$log" | grep -v ' passed, .* failed$' || true
    local line
    line=$(tail -n 1 "$log")
    if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
        passed=$((passed + BASH_REMATCH[1]))
        failed=$((failed + BASH_REMATCH[2]))
        if [ $status -ne 0 ] && [ "${BASH_REMATCH[2]}" = 0 ]; then failed=$((failed + 1)); fi
    else
        echo "$name: no result line (exit $status)"
        failed=$((failed + 1))
    fi
    echo "$name: $line"
}

start=$SECONDS
run cli python3 "$HERE/cli_test.py" --inkling "$INKLING" --pack "$PACK"
# Tests/CLI: the command-line conventions of the three executables (--help, --version, usage
# errors, the man page against --help, suggest with learned words, predict --stdio limits).
run cli-conventions python3 "$ROOT/Tests/CLI/cli_conventions_test.py" --bin "$(dirname "$INKLING")" --pack "$PACK" --man "$ROOT/packaging/inkling.1"
run crash python3 "$HERE/crash_test.py" --inkling "$INKLING" --iterations 60 --seed "${SEED:-8}" --dir "$WORK/crash"
echo "($((SECONDS - start)) s)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
