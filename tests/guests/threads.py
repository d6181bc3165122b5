"""threads.py: a guest with 5 threading.Thread workers.

Each worker computes a little (holding the GIL), then prints a line with its
step and threading.get_native_id(). It checks determinism of the CPython
interpreter's threads: natively the interleaving and the native ids vary
between runs; under hermit the output is the same on every run.
Lines go out with one os.write each, so they never tear.
"""

import os
import threading

WORKERS = 5
STEPS = 4


def say(line):
    os.write(1, (line + "\n").encode())


def worker(n, order, lock):
    for step in range(STEPS):
        sum(i * i for i in range(100000))
        with lock:
            order.append(n)
        say(f"worker {n} step {step} native_id {threading.get_native_id()}")


def main():
    order, lock = [], threading.Lock()
    threads = [threading.Thread(target=worker, args=(n, order, lock)) for n in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    say("order " + " ".join(map(str, order)))


main()
