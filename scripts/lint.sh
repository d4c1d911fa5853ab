#!/bin/bash
# `make lint`: swift-format (.swift-format; Tests/.swift-format allows force unwraps and force
# try), flake8 (.flake8) over every Python file and shellcheck over every shell script. Runs all
# three and fails if any of them finds something or is missing (scripts/install-deps.sh installs
# flake8 and shellcheck; swift-format comes with the Swift toolchain).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export PATH="/opt/swift/usr/bin:$PATH"
status=0

fail() {
    echo "lint: $1" >&2
    status=1
}

# Source files: tracked or new, never build output or caches.
files() {
    git ls-files --cached --others --exclude-standard -- "$@" | while read -r file; do
        if [ -f "$file" ]; then echo "$file"; fi
    done
}

if swift format --version >/dev/null 2>&1; then
    mapfile -t swift_files < <(files '*.swift')
    swift format lint --strict --parallel "${swift_files[@]}" || fail "swift-format found problems (fix: swift format -i -p <files>)"
else
    fail "swift format is missing (it comes with the Swift toolchain, /opt/swift/usr/bin)"
fi

if /usr/bin/python3 -m flake8 --version >/dev/null 2>&1; then
    mapfile -t python_files < <(files '*.py')
    /usr/bin/python3 -m flake8 "${python_files[@]}" || fail "flake8 found problems"
else
    fail "flake8 is missing (sh scripts/install-deps.sh installs python3-flake8)"
fi

if command -v shellcheck >/dev/null; then
    mapfile -t shell_files < <(files '*.sh' .ci/run)
    shellcheck "${shell_files[@]}" || fail "shellcheck found problems"
else
    fail "shellcheck is missing (sh scripts/install-deps.sh installs shellcheck)"
fi

if [ "$status" -eq 0 ]; then echo "lint: clean"; fi
exit "$status"
