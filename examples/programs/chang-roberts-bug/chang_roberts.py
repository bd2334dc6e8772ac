#!/usr/bin/env python3
"""Chang-Roberts (AsFar) as a Ringleader program (protocol 1, docs/programs.md).

Every awake node remembers the best id it has seen and passes an arriving id
on only if it beats all of them, so each id travels as far as it can. The id
that comes back to its owner wins; the winner sends `elected` once round the
ring. A sleeping node woken by an id sends its own first, unless the arriving
id already beats it (then it only passes that one on).

What you write is `init` and `step`; `main` at the bottom speaks the protocol
and needs no change. Both must be pure: the same state and input give the
same answer every time (the checker asks each question once and remembers).
Standard library only.
"""

import json
import sys

LEFT, RIGHT = 0, 1  # on a ring: port 0 leads left, port 1 right


def beats(rule, a, b):
    """Does id `a` beat id `b` under the election's rule ("max" or "min")?"""
    return a > b if rule == "max" else a < b


def other(port):
    """The other port of a ring node: what came in on one side goes out on the other."""
    return RIGHT if port == LEFT else LEFT


def send(port, kind, **fields):
    return {"type": "send", "port": port, "kind": kind, "fields": fields}


def decide(role, leader):
    return {"type": "decide", "role": role, "leader": leader}


def init(node):
    """The node's first state and its name, from what the ring tells it."""
    state = {"id": node["id"], "rule": node["rule"], "best": node["id"], "status": "asleep"}
    return state, "asleep"


def step(state, input):
    """One step: returns (next state, outputs, state name).

    `state["status"]` is one of asleep, awake, leader, follower; it is also
    the name the pictures show.
    """
    out = []
    me, rule = state["id"], state["rule"]
    if input["type"] == "start":
        if state["status"] == "asleep":  # a node woken by a message has started already
            state["status"] = "awake"
            out.append(send(RIGHT, "election", id=me))
    elif input["type"] == "message" and input["kind"] == "election":
        port, id = input["port"], input["fields"]["id"]
        if state["status"] == "asleep":
            state["status"] = "awake"
            if beats(rule, id, me):
                # Santoro's rule: our own id would be swallowed anyway, so only pass this one on.
                state["best"] = id
                out.append(send(other(port), "election", id=id))
            # BUG (planted): woken by a worse id, the node never sends its own id
        elif state["status"] == "awake":
            if id == me:
                # Our id went all the way round: nothing beat it.
                state["status"] = "leader"
                out.append(decide("leader", me))
                out.append(send(RIGHT, "elected", leader=me))
            elif beats(rule, id, state["best"]):
                state["best"] = id
                out.append(send(other(port), "election", id=id))
            # else: swallowed, a better id has passed here already
        # leader or follower: ids still in flight after the end are swallowed
    elif input["type"] == "message" and input["kind"] == "elected":
        if state["status"] not in ("leader", "follower"):
            state["status"] = "follower"
            leader = input["fields"]["leader"]
            out.append(decide("follower", leader))
            out.append(send(other(input["port"]), "elected", leader=leader))
        # at the leader the notification has gone round: it stops
    elif input["type"] == "message":
        raise ValueError(f"unexpected message kind {input['kind']!r}")
    # timers, suspicions, heartbeats: a one-shot election has none, it stays as it is
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
        except Exception as e:  # reported as the step's failure, with the reason
            reply = {"error": f"{type(e).__name__}: {e}"}
        reply_to.write(json.dumps(reply, separators=(",", ":")) + "\n")
        reply_to.flush()


if __name__ == "__main__":
    main()
