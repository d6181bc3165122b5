"""identity.py: prints the values a Python program gets from the
environment that natively change on every run: a uuid4, the wall and
monotonic clocks, the random module (seeded from os.urandom at import),
os.urandom itself, the str hash (randomized per process) and an object
address. Under hermit every run prints the same lines.
"""

import os
import random
import time
import uuid


def main():
    print("uuid4:", uuid.uuid4())
    print("time.time:", repr(time.time()))
    print("time.monotonic:", repr(time.monotonic()))
    print("random.random:", repr(random.random()))
    print("os.urandom(8):", os.urandom(8).hex())
    print("hash('x'):", hash("x"))
    print("id(object()):", id(object()))
    print("set order:", " ".join({f"k{i}" for i in range(10)}))


main()
