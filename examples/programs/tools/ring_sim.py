#!/usr/bin/env python3
"""Run a Ringleader program (protocol 1) on a ring of n nodes, on random schedules.

A student's first test before the real tools: it starts the program's command
in its directory, asks it `init` for every node and then `step` for each start
and each delivered message, in an order picked at random (seeded; FIFO links
unless --any-order), counts the
election and notification messages (by the manifest's `notification` flags),
and checks the end: every node decided, exactly one leader, everyone agrees
on it, it holds the best id under the rule, and the count is within the
declared bound.

    python3 examples/programs/tools/ring_sim.py examples/programs/chang-roberts --n 5
    python3 examples/programs/tools/ring_sim.py examples/programs/chang-roberts --n 4 --runs 500 --initiators random
    python3 examples/programs/tools/ring_sim.py examples/programs/chang-roberts --n 5 --all-arrangements

It tries random schedules, not all of them: `ringleader-check --program DIR`
tries every one. Standard library only. Exit status 0 when every run ended
well, 1 when one did not (the first failure's schedule is printed; the tool
stops there unless --keep-going), 2 on a usage error.
"""

import argparse
import itertools
import json
import os
import random
import re
import select
import signal
import subprocess
import sys

TOPOLOGIES = ("RING_UNIDIRECTIONAL", "RING_BIDIRECTIONAL", "RING_BIDIRECTIONAL_UNORIENTED")
NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
MAX_VALUE = 2**53 - 1
U64 = 2**64 - 1


class Failure(Exception):
    """The run went wrong: the program failed a step, or the end is not an election."""


# ---------------------------------------------------------------- the bound formula


def evaluate(formula, n, k):
    """Evaluate a manifest's `bound` as the Rust side does (docs/programs.md): integers, n, k,
    + - * / ^ and parentheses, log2 (the ceiling), ceil, floor, min and max of two, in unsigned
    64-bit arithmetic; `/` rounds down, `ceil(a / b)` rounds that division up, subtraction stops
    at 0, overflow stays at 2^64 - 1, and a division by 0 gives 2^64 - 1."""
    tokens = re.findall(r"\d+|[a-z][a-z0-9]*|[-+*/^(),]|\S", formula)
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def take(expected=None):
        nonlocal pos
        t = peek()
        if t is None or (expected is not None and t != expected):
            raise ValueError(f"bound: expected {expected or 'more'} in {formula!r}")
        pos += 1
        return t

    def total():  # sum = product (("+" | "-") product)*
        e = product()
        while peek() in ("+", "-"):
            e = (take(), e, product())
        return e

    def product():
        e = power()
        while peek() in ("*", "/"):
            e = (take(), e, power())
        return e

    def power():
        e = atom()
        if peek() == "^":
            take()
            e = ("^", e, power())
        return e

    def atom():
        t = take()
        if t == "(":
            e = total()
            take(")")
            return e
        if t.isdigit():
            return ("num", int(t))
        if t in ("n", "k"):
            return (t,)
        if t in ("log2", "ceil", "floor", "min", "max"):
            take("(")
            args = [total()]
            if t in ("min", "max"):
                take(",")
                args.append(total())
            take(")")
            return (t, *args)
        raise ValueError(f"bound: unexpected {t!r} in {formula!r}")

    def ev(e):
        op = e[0]
        if op == "num":
            return min(e[1], U64)
        if op == "n":
            return n
        if op == "k":
            return k
        if op == "log2":
            x = ev(e[1])
            return 0 if x <= 1 else (x - 1).bit_length()
        if op == "ceil" and e[1][0] == "/":
            d = ev(e[1][2])
            return U64 if d == 0 else -(-ev(e[1][1]) // d)
        if op in ("ceil", "floor"):
            return ev(e[1])
        if op in ("min", "max"):
            return (min if op == "min" else max)(ev(e[1]), ev(e[2]))
        x, y = ev(e[1]), ev(e[2])
        if op == "+":
            return min(x + y, U64)
        if op == "-":
            return max(x - y, 0)
        if op == "*":
            return min(x * y, U64)
        if op == "/":
            return U64 if y == 0 else x // y
        return U64 if x > 1 and y >= 64 else min(x ** y, U64)  # "^"

    tree = total()
    if peek() is not None:
        raise ValueError(f"bound: unexpected {peek()!r} in {formula!r}")
    return ev(tree)


# ---------------------------------------------------------------- the program's process


class Program:
    """The manifest and one process of the program, serving every node of the ring."""

    def __init__(self, directory, step_ms):
        self.dir = directory
        with open(os.path.join(directory, "program.json")) as f:
            self.manifest = json.load(f)
        m = self.manifest
        if m.get("protocol") != 1:
            raise SystemExit(f"program.json: field `protocol`: this tool speaks protocol 1, not {m.get('protocol')!r}")
        self.name = m["name"]
        self.kinds = m["messages"]
        self.timers = m.get("timers", [])
        self.step_ms = step_ms
        self.proc = None

    def start(self):
        command = list(self.manifest["command"])
        if "/" in command[0]:
            command[0] = os.path.join(self.dir, command[0])
        self.proc = subprocess.Popen(
            command, cwd=self.dir, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sys.stderr,
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
                 "PYTHONUNBUFFERED": "1", "HOME": self.dir})

    def stop(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def ask(self, request):
        """Send one request line, read one reply line (within the step limit)."""
        if self.proc is None:
            self.start()
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        ready, _, _ = select.select([self.proc.stdout], [], [], self.step_ms / 1000)
        if not ready:
            self.stop()
            raise Failure(f"no reply within {self.step_ms} ms (the step limit): the program was stopped")
        line = self.proc.stdout.readline(1 << 20 + 1)
        if not line:
            status = self.proc.wait()
            self.proc = None
            raise Failure(f"the program exited (status {status})")
        if not line.endswith(b"\n"):
            self.stop()
            raise Failure("reply line longer than 1048576 bytes: the program was stopped")
        try:
            reply = json.loads(line)
        except ValueError as e:
            self.stop()
            raise Failure(f"reply is not JSON: {e}: {line[:80]!r}")
        if not isinstance(reply, dict):
            raise Failure("reply is not a JSON object")
        if "error" in reply:
            raise Failure(f"the program said: {reply['error']}")
        allowed = {"state", "name"} | ({"out"} if request["op"] == "step" else set())
        for key in reply:
            if key not in allowed:
                raise Failure(f"reply field `{key}`: unknown field")
        if "state" not in reply:
            raise Failure("reply field `state`: missing")
        name = reply.get("name", "running")
        if not isinstance(name, str) or not NAME.match(name):
            raise Failure(f"reply field `name`: {name!r} is not a state name ([a-z][a-z0-9_-]*, at most 32)")
        return reply


# ---------------------------------------------------------------- the ring


def value(v, where):
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= MAX_VALUE:
        raise Failure(f"reply field `{where}`: {v!r} is not an integer in 0..=2^53-1")
    return v


def run(program, ids, initiators, rule, topology, fifo, stagger, rng, trace):
    """One election on one random schedule; returns (election, notification, leader id, words)."""
    n = len(ids)
    uni = topology == "RING_UNIDIRECTIONAL"
    flip = [topology == "RING_BIDIRECTIONAL_UNORIENTED" and rng.random() < 0.5 for _ in range(n)]
    # Local port p of node i leads clockwise (to i+1) when p ^ flip[i] == 1, else to i-1.

    def behind(i, port):
        """(node, its port) that a message sent on `port` of node `i` reaches."""
        if (port ^ flip[i]) == 1:
            j = (i + 1) % n
            return j, 0 ^ flip[j]
        j = (i - 1) % n
        return j, 1 ^ flip[j]

    states, names, decisions = [None] * n, [None] * n, [None] * n
    steps = [0] * n
    words = []
    for i in range(n):
        ports = [{"port": p, "neighbour": ids[behind(i, p)[0]]} for p in (0, 1)]
        node = {"position": i, "id": ids[i], "n": n, "rule": rule, "coin": rng.getrandbits(53),
                "ports": ports, "options": {}}
        reply = program.ask({"op": "init", "node": node})
        states[i], names[i] = reply["state"], reply.get("name", "running")
    links = {}  # (from, to) -> list of (to_port, kind, fields)
    timers = set()  # (node, timer name)
    pending = list(initiators)
    counts = {"election": 0, "notification": 0}

    def apply(i, out):
        if not isinstance(out, list):
            raise Failure("reply field `out`: not a list")
        for x, o in enumerate(out):
            where = f"out[{x}]"
            if not isinstance(o, dict):
                raise Failure(f"reply field `{where}`: not an object")
            t = o.get("type")
            if t == "send":
                for key in o:
                    if key not in ("type", "port", "kind", "fields"):
                        raise Failure(f"reply field `{where}.{key}`: unknown field")
                port = o.get("port")
                if port not in (0, 1) or (uni and (port ^ flip[i]) != 1):
                    raise Failure(f"reply field `{where}.port`: {port!r} is not a port this node sends on")
                kind = o.get("kind")
                if kind not in program.kinds:
                    raise Failure(f"reply field `{where}.kind`: {kind!r} is not a kind of program.json")
                declared = program.kinds[kind].get("fields", [])
                fields = o.get("fields", {})
                for f in fields:
                    if f not in declared:
                        raise Failure(f"reply field `{where}.fields.{f}`: not a field of `{kind}`")
                full = {f: value(fields.get(f, 0), f"{where}.fields.{f}") for f in declared}
                j, jp = behind(i, port)
                links.setdefault((i, j), []).append((jp, kind, full))
                counts["notification" if program.kinds[kind].get("notification") else "election"] += 1
                words.append(f"  {ids[i]} sends {kind} {full} to {ids[j]}")
            elif t == "decide":
                role, leader = o.get("role"), o.get("leader")
                if role not in ("leader", "follower"):
                    raise Failure(f"reply field `{where}.role`: {role!r} is not leader or follower")
                value(leader, f"{where}.leader")
                if decisions[i] is not None:
                    raise Failure(f"node {ids[i]} decided twice ({decisions[i]} then {role} {leader})")
                decisions[i] = (role, leader)
                words.append(f"  {ids[i]} decides: {role}, leader {leader}")
            elif t == "set_timer":
                if o.get("timer") not in program.timers:
                    raise Failure(f"reply field `{where}.timer`: {o.get('timer')!r} is not a timer of program.json")
                timers.add((i, o["timer"]))
            elif t == "cancel_timer":
                timers.discard((i, o.get("timer")))
            else:
                raise Failure(f"reply field `{where}.type`: {t!r} is not an output of a one-shot election")

    def step(i, inp, what):
        steps[i] += 1
        words.append(f"{ids[i]} ({names[i]}) takes {what}")
        if trace:
            print(words[-1], file=sys.stderr)
        try:
            reply = program.ask({"op": "step", "state": states[i], "input": inp})
        except Failure as e:
            raise Failure(f"program {program.name}, id {ids[i]} (position {i}), step {steps[i]} ({what}): {e}")
        mark = len(words)
        states[i], names[i] = reply["state"], reply.get("name", "running")
        apply(i, reply.get("out", []))
        if trace:
            for w in words[mark:]:
                print(w, file=sys.stderr)

    while True:
        choices = [("start", i) for i in pending]
        if not choices or stagger:  # by default every initiator wakes before the first delivery, as in the simulator
            for link, queue in links.items():
                for x in range(1 if fifo else len(queue)):
                    if x < len(queue):
                        choices.append(("message", link, x))
            choices += [("timer", t) for t in sorted(timers)]
        if not choices:
            break
        c = rng.choice(choices)
        if c[0] == "start":
            pending.remove(c[1])
            step(c[1], {"type": "start"}, "start")
        elif c[0] == "timer":
            timers.discard(c[1])
            step(c[1][0], {"type": "timer", "timer": c[1][1]}, f"timer {c[1][1]}")
        else:
            (i, j), x = c[1], c[2]
            port, kind, fields = links[(i, j)].pop(x)
            step(j, {"type": "message", "port": port, "kind": kind, "fields": fields},
                 f"{kind} {fields} from {ids[i]} on port {port}")

    best = max(ids) if rule == "max" else min(ids)
    leaders = [ids[i] for i in range(n) if decisions[i] and decisions[i][0] == "leader"]
    undecided = [ids[i] for i in range(n) if decisions[i] is None]
    if len(leaders) > 1:
        raise Failure(f"two or more leaders: {leaders}", words)
    if undecided:
        lead = f"leader {leaders[0]}" if leaders else "no leader"
        raise Failure(f"{lead}, and nodes {undecided} never decided: nothing is in flight any more", words)
    wrong = [ids[i] for i in range(n) if decisions[i][1] != leaders[0]]
    if wrong:
        raise Failure(f"nodes {wrong} follow another leader than {leaders[0]}", words)
    if leaders[0] != best:
        raise Failure(f"leader {leaders[0]} is not the {rule} id {best}", words)
    return counts["election"], counts["notification"], leaders[0], words


def arrangement(spec, n, rng):
    if spec == "ascending":
        return list(range(1, n + 1))
    if spec == "descending":
        return list(range(n, 0, -1))
    if spec == "random":
        ids = list(range(1, n + 1))
        rng.shuffle(ids)
        return ids
    ids = [int(x) for x in spec.split(",")]
    if len(set(ids)) != len(ids) or not all(1 <= x <= MAX_VALUE for x in ids):
        raise SystemExit("--ids: distinct integers 1..=2^53-1, comma-separated")
    return ids


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the tool quietly
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir", help="the program's directory (holding program.json)")
    p.add_argument("--n", type=int, default=5, help="ring size (default 5)")
    p.add_argument("--ids", default="random",
                   help="ascending | descending | random (default) | a list like 3,1,4,2 (then --n is its length)")
    p.add_argument("--initiators", default="all",
                   help="all (default) | random (a random non-empty set each run) | positions like 0,2")
    p.add_argument("--runs", type=int, default=1, help="schedules to try (default 1)")
    p.add_argument("--seed", type=int, default=1, help="seed of the first run (run r uses seed + r)")
    p.add_argument("--topology", help="one of the manifest's topologies (default its first)")
    p.add_argument("--any-order", action="store_true",
                   help="deliver in any order, even where the manifest assumes FIFO links, as the checker's "
                        "--any-order (default: in sending order on every link, as the simulator and the runtime do)")
    p.add_argument("--stagger", action="store_true",
                   help="initiators wake at random points of the schedule (default: all before the first delivery)")
    p.add_argument("--rule", choices=("max", "min"), help="the rule (default the manifest's)")
    p.add_argument("--all-arrangements", action="store_true",
                   help="one run for each of the n! arrangements of the ids 1..n; prints each one's counts")
    p.add_argument("--step-ms", type=int, default=1000, help="the step limit (default 1000)")
    p.add_argument("--keep-going", action="store_true",
                   help="after a failed run, go on with the others and count the failures")
    p.add_argument("--trace", action="store_true", help="print every step (on stderr)")
    a = p.parse_args()

    program = Program(a.dir, a.step_ms)
    m = program.manifest
    topologies = m["topology"] if isinstance(m["topology"], list) else [m["topology"]]
    topology = a.topology or topologies[0]
    if topology not in TOPOLOGIES:
        raise SystemExit(f"this tool runs rings only ({', '.join(TOPOLOGIES)}), not {topology}")
    fifo = not a.any_order
    rule = a.rule or m["rule"]
    seed_rng = random.Random(a.seed)
    if a.all_arrangements:
        cases = [list(ids) for ids in itertools.permutations(range(1, a.n + 1))]
    else:
        first = arrangement(a.ids, a.n, seed_rng)
        cases = [first if a.ids != "random" or r == 0 else arrangement("random", len(first), seed_rng)
                 for r in range(a.runs)]
    totals, failed = [], 0
    try:
        for r, ids in enumerate(cases):
            rng = random.Random(a.seed + r)
            n = len(ids)
            if a.initiators == "all":
                initiators = list(range(n))
            elif a.initiators == "random":
                initiators = [i for i in range(n) if rng.random() < 0.5] or [rng.randrange(n)]
            else:
                initiators = [int(x) for x in a.initiators.split(",")]
                if not initiators or any(not 0 <= i < n for i in initiators):
                    raise SystemExit(f"--initiators: positions 0..{n - 1}")
            try:
                el, no, leader, words = run(program, ids, initiators, rule, topology, fifo, a.stagger, rng, a.trace)
            except Failure as e:
                failed += 1
                if failed == 1 or not a.keep_going:
                    print(f"run {r} (seed {a.seed + r}), ids {ids}, initiators at {initiators}: FAILED: {e.args[0]}")
                    if len(e.args) > 1:
                        print("the schedule:")
                        for w in e.args[1]:
                            print("  " + w)
                program.stop()  # a fresh process for the next run
                if a.keep_going:
                    continue
                break
            total = el + no
            bound = evaluate(m["bound"], n, len(initiators)) if "bound" in m else None
            if bound is not None and total > bound:
                failed += 1
                print(f"run {r} (seed {a.seed + r}), ids {ids}: FAILED: {total} messages, over the bound {m['bound']} = {bound}")
                if a.keep_going:
                    continue
                break
            totals.append(total)
            if a.all_arrangements or a.runs <= 10:
                print(f"ids {' '.join(map(str, ids))}  initiators {len(initiators)}  election {el}  notification {no}"
                      f"  total {total}  bound {bound if bound is not None else 'not declared'}  leader {leader}")
    finally:
        program.stop()
    if totals and len(totals) > 1:
        print(f"{len(totals)} runs ended well: messages min {min(totals)}, max {max(totals)}, "
              f"mean {sum(totals) / len(totals):.2f}")
    if a.keep_going and failed:
        print(f"{failed} of {len(totals) + failed} runs failed (the first one's schedule is above)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
