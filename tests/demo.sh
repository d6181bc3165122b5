#!/usr/bin/env bash
# demo.sh: show what hermit does, on a small racy program (run by `make demo`
# after `make build`).
#
# It compiles tests/guests/racy_counter.c (8 threads, unsynchronised counter),
# runs it natively twice and under `bin/hermit run` twice, prints the outputs,
# and reports whether the native runs differed and the hermit runs were
# byte-identical. It exits 1 if the hermit runs differ or hermit fails.
#
# Then it records one run with `bin/hermit record`, deletes the program, and
# replays the trace twice with `bin/hermit replay --autopilot`: the replays
# must print the recorded bytes, and debugs the replay in gdb (if
# installed). Each step is a function called from main.
set -euo pipefail

cd "$(dirname "$0")/.."
HERMIT=${HERMIT:-bin/hermit}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# hermit's cache of recorded files and rebuilt roots lives in $WORK, not
# in the user's ~/.cache.
export HERMIT_CACHE_DIR="$WORK/cache"

heading() {
	printf '\n=== %s ===\n' "$*"
}

# show NAME CMD...: runs CMD, saves its stdout in $WORK/NAME.out, prints it.
show() {
	local name=$1
	shift
	heading "$name: $*"
	local rc=0
	"$@" >"$WORK/$name.out" || rc=$?
	cat "$WORK/$name.out"
	if [ "$rc" -ne 0 ]; then
		echo "($name exited with status $rc)"
		return "$rc"
	fi
}

# same A B: succeeds if the saved outputs of A and B are byte-identical.
same() {
	cmp -s "$WORK/$1.out" "$WORK/$2.out"
}

build_guest() {
	[ -x "$HERMIT" ] || { echo "demo: $HERMIT not found; run 'make build' first" >&2; exit 1; }
	cc -O1 -g -pthread -Wall -o "$WORK/racy_counter" tests/guests/racy_counter.c
	echo "Compiled tests/guests/racy_counter.c: 8 threads increment a shared counter without a lock."
}

demo_run() {
	show native-1 "$WORK/racy_counter"
	show native-2 "$WORK/racy_counter"
	show hermit-1 "$HERMIT" run -- "$WORK/racy_counter" || { echo "demo: hermit run failed" >&2; return 1; }
	show hermit-2 "$HERMIT" run -- "$WORK/racy_counter" || { echo "demo: hermit run failed" >&2; return 1; }

	heading "result"
	if same native-1 native-2; then
		echo "native runs:  identical this time (the race did not show; tids usually differ)"
	else
		echo "native runs:  differ"
	fi
	if same hermit-1 hermit-2; then
		echo "hermit runs:  byte-identical"
	else
		echo "hermit runs:  DIFFER"
		diff "$WORK/hermit-1.out" "$WORK/hermit-2.out" || true
		return 1
	fi
}

# demo_replay records one run into a trace, then replays it twice from the
# trace alone after deleting the program: the replays print the recorded
# bytes.
demo_replay() {
	local trace="$WORK/trace"
	cp "$WORK/racy_counter" "$WORK/racy_copy"
	show recorded "$HERMIT" record -o "$trace" -- "$WORK/racy_copy" || { echo "demo: hermit record failed" >&2; return 1; }
	rm "$WORK/racy_copy"
	echo "(deleted the program; replaying from $trace alone)"
	show replay-1 "$HERMIT" replay --autopilot "$trace" || { echo "demo: hermit replay failed" >&2; return 1; }
	show replay-2 "$HERMIT" replay --autopilot "$trace" || { echo "demo: hermit replay failed" >&2; return 1; }
	heading "result"
	if same recorded replay-1 && same recorded replay-2; then
		echo "replays:      byte-identical to the recording"
	else
		echo "replays:      DIFFER from the recording"
		return 1
	fi
}

# demo_debug debugs the recording in gdb (batch mode): a breakpoint in a
# worker thread, the threads with the tids the recording printed, then
# the final count at the end of main, on to the end of the recording and
# back to that line (reverse execution), and the recorded exit status.
demo_debug() {
	if ! command -v gdb >/dev/null; then
		heading "debugging the replay: skipped (gdb is not installed: apt-get install gdb)"
		return 0
	fi
	heading "debugging the replay in gdb: $HERMIT replay --gdb TRACE -- -batch ..."
	"$HERMIT" replay --gdb "$WORK/trace" -- -nx -batch \
		-ex 'break worker' -ex 'continue' -ex 'bt 1' -ex 'info threads' -ex 'delete' \
		-ex 'break racy_counter.c:45' -ex 'continue' -ex 'print counter' \
		-ex 'monitor when' -ex 'continue' -ex 'reverse-continue' -ex 'monitor when' \
		-ex 'continue' -ex 'continue' 2>&1 |
		grep -v -e '^Reading ' -e 'File transfers from remote targets' >"$WORK/gdb.out" || true
	cat "$WORK/gdb.out"
	heading "result"
	local want
	want=$(sed -n 's/^counter = \([0-9]*\) of.*/\1/p' "$WORK/recorded.out")
	if grep -q "^\$1 = $want\$" "$WORK/gdb.out" && grep -q 'exited normally' "$WORK/gdb.out"; then
		echo "debugger:     saw counter = $want, as recorded, and the recorded exit"
	else
		echo "debugger:     did not see the recorded run"
		return 1
	fi
}

main() {
	build_guest
	demo_run
	demo_replay
	demo_debug
}

main "$@"
