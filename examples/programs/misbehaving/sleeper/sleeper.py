#!/usr/bin/env python3
"""Chang-Roberts that hangs: each node's 3rd step sleeps 30 s (then answers as usual)."""
import time

import os
import sys

# The correct Chang-Roberts of examples/programs/chang-roberts, with one way of misbehaving on top.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "chang-roberts"))
import chang_roberts as cr  # noqa: E402

base = cr.step


def step(state, input):
    state["steps"] = state.get("steps", 0) + 1
    if state["steps"] == 3:
        time.sleep(30)
    return base(state, input)


cr.step = step
cr.main()
