#!/usr/bin/env python3
"""Chang-Roberts that answers garbage: each node's 2nd step prints a line that is not JSON first."""
import sys

import os

# The correct Chang-Roberts of examples/programs/chang-roberts, with one way of misbehaving on top.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "chang-roberts"))
import chang_roberts as cr  # noqa: E402

base = cr.step


def step(state, input):
    state["steps"] = state.get("steps", 0) + 1
    if state["steps"] == 2:
        sys.__stdout__.write("hello from step 2, this is not JSON\n")
        sys.__stdout__.flush()
    return base(state, input)


cr.step = step
cr.main()
