#!/usr/bin/env bash
# Applies, plans and destroys a 100-host lab (100 namespaces, each with a
# veth to one switch) through the tsolab CLI and prints the wall time of
# each: bench/provision-1000 with HOSTS=100. Target (issue 2): under 2 s
# each on a 2-core machine. Needs root.
HOSTS=${HOSTS:-100} exec "$(dirname "$0")/../provision-1000/run.sh"
