# The gdb side of one gdbbench session, run as `gdb -nx -batch -x bench.py BIN`
# with the stub's address and the workload sizes in the environment. It
# prints "gdbbench KEY VALUE..." lines for the Go harness; any failure raises,
# which gdb reports on stderr, and the missing lines tell the harness.
import os
import time

import gdb

addr = os.environ["GDBBENCH_ADDR"]
steps = int(os.environ["GDBBENCH_STEPS"])
hits = int(os.environ["GDBBENCH_HITS"])


def run(cmd):
    gdb.execute(cmd, to_string=True)


def report(*fields):
    print("gdbbench", *fields, flush=True)


def mark(name):
    # Wall-clock marks let the harness's counting proxy tell which packets
    # belong to which timed command.
    report("mark", name, time.time_ns())


run("set pagination off")
run("set confirm off")
try:
    run("set debuginfod enabled off")
except gdb.error:
    pass
run("target remote " + addr)

# stepi rate: break at the busy loop, then time only the stepping.
b = gdb.Breakpoint("spin", internal=True)
run("continue")
if gdb.selected_frame().name() != "spin":
    raise gdb.GdbError("stopped in %s, not in spin" % gdb.selected_frame().name())
b.delete()
mark("stepi-start")
t = time.perf_counter()
run("stepi %d" % steps)
elapsed = time.perf_counter() - t
mark("stepi-end")
where = gdb.selected_frame().name()
if where != "spin":
    raise gdb.GdbError("stepi %d left spin for %s" % (steps, where))
report("stepi", steps, "%.9f" % elapsed)

# Breakpoint round trips: stop at the first hit, then continue through
# `hits` more with an ignore count. gdb counts ignored hits itself, so each
# is a real stop and resume through the stub.
b = gdb.Breakpoint("hit", internal=True)
run("continue")
if b.hit_count != 1 or gdb.selected_frame().name() != "hit":
    raise gdb.GdbError("first stop: hit count %d in %s" % (b.hit_count, gdb.selected_frame().name()))
b.ignore_count = hits - 1
mark("hits-start")
t = time.perf_counter()
run("continue")
elapsed = time.perf_counter() - t
mark("hits-end")
if b.hit_count != hits + 1 or gdb.selected_frame().name() != "hit":
    raise gdb.GdbError("after %d round trips: hit count %d (want %d) in %s" % (hits, b.hit_count, hits + 1, gdb.selected_frame().name()))
report("hits", hits, "%.9f" % elapsed, b.hit_count)
run("kill")
report("done")
