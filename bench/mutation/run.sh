#!/usr/bin/env bash
# Applies each mutation of bench/mutation/main.go (small breaking changes
# across the packages) to a copy of the tree, runs the tests that should
# notice, and prints which mutations no test caught. Target (issue 17):
# every one caught. Not part of CI; run as root for the namespace ones
# (or pass -no-netns). Extra arguments go to the program (-only REGEXP).
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./bench/mutation "$@"
