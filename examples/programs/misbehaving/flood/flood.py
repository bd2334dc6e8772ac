#!/usr/bin/env python3
"""Chang-Roberts that floods: each node's 2nd step prints one 10 MiB line (a JSON object, if read whole)."""
import sys

import os

# The correct Chang-Roberts of examples/programs/chang-roberts, with one way of misbehaving on top.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "chang-roberts"))
import chang_roberts as cr  # noqa: E402

base = cr.step


def step(state, input):
    state["steps"] = state.get("steps", 0) + 1
    if state["steps"] == 2:
        sys.__stdout__.write('{"state":"' + "x" * (10 << 20) + '"}\n')
        sys.__stdout__.flush()
    return base(state, input)


cr.step = step
cr.main()
