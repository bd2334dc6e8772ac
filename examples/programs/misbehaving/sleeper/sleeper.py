#!/usr/bin/env python3
"""Chang-Roberts that hangs: each node's 3rd step sleeps 30 s (then answers as usual)."""
import time

import chang_roberts as cr

base = cr.step


def step(state, input):
    state["steps"] = state.get("steps", 0) + 1
    if state["steps"] == 3:
        time.sleep(30)
    return base(state, input)


cr.step = step
cr.main()
