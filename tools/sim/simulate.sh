#!/bin/sh
# simulate.sh — replays a shiro plan on a simulated GPU cluster (SimGrid SMPI): builds shiro-spmm
# against SimGrid into build-sim/ (tools/dev/install-deps.sh --sim installs it), makes the platform,
# runs smpirun, prints one JSON object on stdout and a summary on stderr. tools/sim/README.md.
#   tools/sim/simulate.sh PLAN.h5 --n N --dtype float|double|bfloat16|float16 (--machine NAME|FILE.json | --platform FILE.xml)
#                     [--compute none|model] [--iters K] [--check MATRIX.mtx] ... (--help for all)
exec python3 "$(dirname "$0")/simulate.py" "$@"
