#!/bin/sh
# Regenerate the SimGrid SMPI Paje traces in this directory and their
# pj_dump reference outputs.
#
#   <name>-<n>.trace   Paje trace written by `smpirun -trace` (n = 4, 8, 16 ranks)
#   <name>-<n>.pjdump  `pj_dump <name>-<n>.trace | LC_ALL=C sort`
#
# Requirements (Debian bookworm): libsimgrid-dev (smpicc, smpirun) and
# pajeng (pj_dump). Usage:  sh testdata/smpi/generate.sh   (from anywhere)
#
# The output is deterministic: computation is injected with
# smpi_execute_flops() and host benchmarking is disabled
# (smpi/simulate-computation:no); the programs are built and run in a
# scratch directory with relative paths, and TMPDIR is pinned, because the
# trace header records smpirun's full command line.
set -eu

die() {
    echo "generate.sh: error: $*" >&2
    exit 1
}

HERE=$(cd "$(dirname "$0")" && pwd)
RANKS="4 8 16"
PROGRAMS="ring farm stencil"

for tool in smpicc smpirun pj_dump sort; do
    command -v "$tool" >/dev/null 2>&1 ||
        die "'$tool' not found in PATH (apt-get install libsimgrid-dev pajeng)"
done

EXPECTED_SIMGRID="SimGrid version 3.32"
found=$(smpirun -version 2>/dev/null | head -n 1 || true)
if [ "$found" != "$EXPECTED_SIMGRID" ]; then
    echo "generate.sh: warning: expected '$EXPECTED_SIMGRID', found '$found';" \
        "traces will differ from the committed ones" >&2
fi

# Per-program tracing options. All use the Paje format (-trace) and trace
# computation phases as "computing" states.
#   ring    : basic SMPI tracing plus a one-line comment
#   farm    : + collective internals (links inside MPI_Reduce) and message
#             sizes (extra "Size" field in PushState/StartLink)
#   stencil : + resource utilisation (host/link containers and variables)
# The comment must be a single word: smpirun word-splits it.
trace_opts() {
    common="-trace-comment tracecast-testdata:$1 --cfg=tracing/smpi/computing:yes"
    case "$1" in
    ring) echo "$common" ;;
    farm) echo "$common --cfg=tracing/smpi/internals:yes --cfg=tracing/smpi/display-sizes:yes" ;;
    stencil) echo "$common -trace-resource --cfg=tracing/platform/topology:no" ;;
    *) die "no options for program '$1'" ;;
    esac
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tracecast-smpi.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$WORK"' EXIT INT TERM

cp "$HERE/platform.xml" "$HERE/hostfile.txt" "$WORK/" || die "cannot copy platform files"

cd "$WORK"
for prog in $PROGRAMS; do
    echo "== compiling $prog.c"
    smpicc -O1 -Wall -o "$prog" "$HERE/$prog.c" || die "smpicc failed on $prog.c"
done

# smpirun records its temporary directory in the trace header.
TMPDIR=/tmp
export TMPDIR

for prog in $PROGRAMS; do
    for n in $RANKS; do
        name="$prog-$n"
        echo "== running $name"
        rm -f "$name.trace"
        # shellcheck disable=SC2046 # word splitting of trace_opts is intended
        if ! smpirun -np "$n" -platform platform.xml -hostfile hostfile.txt \
            -trace -trace-file "$name.trace" $(trace_opts "$prog") \
            --cfg=smpi/simulate-computation:no \
            --log=root.thres:warning \
            "./$prog" >"$name.log" 2>&1; then
            cat "$name.log" >&2
            die "smpirun failed for $name"
        fi
        [ -s "$name.trace" ] || die "smpirun wrote no trace for $name"

        if ! pj_dump "$name.trace" >"$name.raw" 2>"$name.err"; then
            cat "$name.err" >&2
            die "pj_dump rejected $name.trace"
        fi
        grep -q '^State,' "$name.raw" || die "$name.trace has no states"
        grep -q '^Link,' "$name.raw" || die "$name.trace has no links"
        LC_ALL=C sort "$name.raw" >"$name.pjdump"

        cp "$name.trace" "$name.pjdump" "$HERE/"
        printf '   %s: %s bytes, %s pj_dump lines\n' "$name.trace" \
            "$(wc -c <"$name.trace" | tr -d ' ')" "$(wc -l <"$name.pjdump" | tr -d ' ')"
    done
done
echo "== done"
