#!/usr/bin/env python3
"""Chang-Roberts that crashes: each node's 2nd step exits with status 3."""
import sys

import chang_roberts as cr

base = cr.step


def step(state, input):
    state["steps"] = state.get("steps", 0) + 1
    if state["steps"] == 2:
        print("exiter: exiting with status 3 on purpose", file=sys.stderr, flush=True)
        sys.exit(3)
    return base(state, input)


cr.step = step
cr.main()
