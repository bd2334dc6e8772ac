#!/usr/bin/env python3
"""Chang-Roberts that crashes: each node's 2nd step exits with status 3."""
import sys

import os

# The correct Chang-Roberts of examples/programs/chang-roberts, with one way of misbehaving on top.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "chang-roberts"))
import chang_roberts as cr  # noqa: E402

base = cr.step


def step(state, input):
    state["steps"] = state.get("steps", 0) + 1
    if state["steps"] == 2:
        print("exiter: exiting with status 3 on purpose", file=sys.stderr, flush=True)
        sys.exit(3)
    return base(state, input)


cr.step = step
cr.main()
