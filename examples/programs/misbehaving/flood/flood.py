#!/usr/bin/env python3
"""Chang-Roberts that floods: each node's 2nd step prints one 10 MiB line (a JSON object, if read whole)."""
import sys

import chang_roberts as cr

base = cr.step


def step(state, input):
    state["steps"] = state.get("steps", 0) + 1
    if state["steps"] == 2:
        sys.__stdout__.write('{"state":"' + "x" * (10 << 20) + '"}\n')
        sys.__stdout__.flush()
    return base(state, input)


cr.step = step
cr.main()
