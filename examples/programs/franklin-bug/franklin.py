#!/usr/bin/env python3
"""Franklin's Stages as a Ringleader program (protocol 1, docs/programs.md).

In each stage every candidate sends its id both ways; defeated nodes relay,
so each id reaches the nearest candidate on each side. After the first id of
a stage a candidate closes that port (it holds what arrives there: on FIFO
links that is already the next stage), and after the second it survives to
the next stage if its own id beats both, otherwise it is defeated; then it
reopens the port and handles what it held. A candidate whose own id comes
back is the only one left; once its id is back from both sides (so no id is
still in flight) it leads and sends `elected` once round the ring.

What you write is `init` and `step`; `main` at the bottom speaks the protocol
and needs no change. Both must be pure. Standard library only.
"""

import json
import sys

LEFT, RIGHT = 0, 1  # on a ring: port 0 leads left, port 1 right


def better(rule, a, b):
    """The better of ids `a` and `b` under the election's rule ("max" or "min")."""
    return max(a, b) if rule == "max" else min(a, b)


def other(port):
    return RIGHT if port == LEFT else LEFT


def send(port, kind, **fields):
    return {"type": "send", "port": port, "kind": kind, "fields": fields}


def init(node):
    """The node's first state and its name."""
    state = {
        "id": node["id"],
        "rule": node["rule"],
        "status": "asleep",  # asleep, candidate, waiting, defeated, winning, leader, follower
        "stage": 0,
        "best": node["id"],  # the best id seen in this stage
        "closed": None,  # while waiting: the port the first id came on
        "held": [],  # [port, kind, fields] that came on the closed port, in order
    }
    return state, "asleep"


def next_stage(state, out):
    state["stage"] += 1
    state["best"] = state["id"]
    state["status"] = "candidate"
    for port in (RIGHT, LEFT):
        out.append(send(port, "election", id=state["id"], stage=state["stage"]))


def receive(state, port, kind, fields, out):
    """Handle one message (also one taken back from the held queue)."""
    status, me = state["status"], state["id"]
    if kind == "election":
        id, stage = fields["id"], fields["stage"]
        if status == "candidate" and id == me:
            state["status"] = "winning"  # our id came back: everyone else is defeated
        elif status == "winning" and id == me:
            state["status"] = "leader"  # back from both sides: nothing is in flight any more
            out.append({"type": "decide", "role": "leader", "leader": me})
            out.append(send(RIGHT, "elected", leader=me))
        elif status == "winning":
            raise ValueError(f"id {id} reached the last candidate {me}")
        elif status == "candidate":
            check_stage(state, id, stage)
            state["best"] = better(state["rule"], state["best"], id)
            state["status"], state["closed"] = "waiting", port
        elif status == "waiting" and port == state["closed"]:
            state["held"].append([port, kind, fields])
        elif status == "waiting":
            check_stage(state, id, stage)
            state["best"] = better(state["rule"], state["best"], id)
            state["closed"] = None
            if state["best"] == me:
                next_stage(state, out)
            else:
                state["status"] = "defeated"
                state["held"] = []  # BUG (planted): a defeated node forgets what it held
            # Reopen the closed port: handle what it held, in order.
            held, state["held"] = state["held"], []
            for p, k, f in held:
                receive(state, p, k, f, out)
        elif status == "defeated":
            out.append(send(other(port), kind, **fields))
        elif status in ("leader", "follower"):
            raise ValueError(f"id {id} arrived after the end")
        else:
            raise ValueError(f"id {id} reached node {me} while {status}")
    elif kind == "elected":
        if status in ("leader", "follower", "winning"):
            return
        if status == "waiting" and port == state["closed"]:
            state["held"].append([port, kind, fields])
            return
        state["status"], state["closed"], state["held"] = "follower", None, []
        out.append({"type": "decide", "role": "follower", "leader": fields["leader"]})
        out.append(send(other(port), "elected", leader=fields["leader"]))
    else:
        raise ValueError(f"unexpected message kind {kind!r}")


def check_stage(state, id, stage):
    """With FIFO links a candidate only ever hears ids of its own stage."""
    if stage != state["stage"]:
        raise ValueError(f"id {id} of stage {stage} reached a candidate in stage {state['stage']} (links not FIFO?)")


def step(state, input):
    """One step: returns (next state, outputs, state name)."""
    out = []
    if input["type"] == "start":
        if state["status"] == "asleep":
            next_stage(state, out)
    elif input["type"] == "message":
        if state["status"] == "asleep" and input["kind"] == "election":
            next_stage(state, out)  # an id wakes a sleeping node: it starts first
        receive(state, input["port"], input["kind"], input["fields"], out)
    return state, out, state["status"]


def main():
    """Protocol 1: one JSON request per line on stdin, one JSON reply per line on stdout."""
    reply_to = sys.stdout
    sys.stdout = sys.stderr  # a stray print() goes to stderr, never into the protocol
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        try:
            request = json.loads(line)
            if request["op"] == "init":
                state, name = init(request["node"])
                reply = {"state": state, "name": name}
            elif request["op"] == "step":
                state, out, name = step(request["state"], request["input"])
                reply = {"state": state, "name": name, "out": out}
            else:
                reply = {"error": f"unknown op {request['op']!r}"}
        except Exception as e:
            reply = {"error": f"{type(e).__name__}: {e}"}
        reply_to.write(json.dumps(reply, separators=(",", ":")) + "\n")
        reply_to.flush()


if __name__ == "__main__":
    main()
