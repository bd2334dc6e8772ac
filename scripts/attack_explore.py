#!/usr/bin/env python3
"""Finding 8 of issue 48: a flood of lab explores against the LIVE elections beside it.

`attack_explore(...)` fires `clients` concurrent `POST /lab/explore` requests (each client sends
one after another on its own keep-alive connection, with the headers the lab page sends from a real
browser tab: the lab header, JSON, its own Origin, `sec-fetch-site: same-origin`, the token as
`Authorization: Bearer` and, when reads are protected, the session cookie) while it times LIVE
elections through grpcurl; it times the same elections before the flood too. scripts/attack imports
it; run alone against a controller already running:

    scripts/attack_explore.py --http 9464 --grpc 50051 [--token T]

Explores are admitted: at most `controller.max_concurrent_explores` replay at once, the others wait
up to 0.5 s for a place and are then refused 429 RESOURCE_EXHAUSTED naming the setting. Measured on
2 cores, 5 embedded nodes: a LIVE bully election on 5 nodes takes 51 ms (wall time of the grpcurl
call) alone and 71 ms under 200 explorers (unadmitted, it took 1,504 ms).
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRPCURL = os.environ.get("GRPCURL", os.path.join(ROOT, ".venv", "bin", "grpcurl"))

# A long path of kept bully with every fault: the costliest explore the lab allows (4 nodes, 999
# choices replayed per call).
EXPLORE = {"algorithm": "bully", "n": 4, "kept": True, "crashes": 1, "losses": 1, "partitions": 1,
           "any_order": True, "path": [0] * 999}


def _live_election(grpc_port, host, token, grpcurl, size):
    """One LIVE bully election of `size` nodes, waited for: (wall ms, the election's own duration ms
    or None, error or None)."""
    body = json.dumps({"algorithm": "bully", "size": size, "mode": "LIVE", "wait": True})
    args = [grpcurl, "-plaintext", "-max-time", "30", "-d", body]
    if token:
        args += ["-H", f"authorization: Bearer {token}"]
    t0 = time.monotonic()
    p = subprocess.run(args + [f"{host}:{grpc_port}", "ringleader.v1.Controller/StartElection"],
                       capture_output=True, text=True, timeout=40)
    wall = (time.monotonic() - t0) * 1000
    if p.returncode != 0:
        return wall, None, p.stderr.strip()[-160:]
    answer = json.loads(p.stdout)
    return wall, answer.get("metrics", {}).get("durationMs"), None


async def _explorer(host, port, headers, body, stop, tally):
    """One browser tab exploring as fast as the controller answers, on one keep-alive connection."""
    request = (f"POST /lab/explore HTTP/1.1\r\nhost: {host}:{port}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
               + f"content-length: {len(body)}\r\n\r\n").encode() + body
    reader = writer = None
    while not stop.is_set():
        try:
            if writer is None:
                reader, writer = await asyncio.open_connection(host, port)
            writer.write(request)
            await writer.drain()
            status_line = await asyncio.wait_for(reader.readline(), 30)
            if not status_line:
                raise ConnectionError("closed")
            status = int(status_line.split()[1])
            length, close = 0, False
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b""):
                    break
                name, _, value = line.decode("latin-1").partition(":")
                if name.lower() == "content-length":
                    length = int(value.strip())
                elif name.lower() == "connection" and value.strip().lower() == "close":
                    close = True
            text = (await reader.readexactly(length)).decode("utf-8", "replace")
            if status == 200:
                tally["answered"] += 1
            else:
                tally["refused"] += 1
                try:
                    message = json.loads(text).get("message", text)
                except ValueError:
                    message = text
                tally["refusals"][f"{status} {message[:120]}"] = tally["refusals"].get(f"{status} {message[:120]}", 0) + 1
                await asyncio.sleep(0.01)
            if close:
                writer.close()
                writer = None
        except (OSError, ConnectionError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError, IndexError):
            tally["failed"] += 1
            if writer is not None:
                writer.close()
            writer = None
            await asyncio.sleep(0.05)
    if writer is not None:
        writer.close()


def _flood(host, port, headers, clients, stop, tally, started):
    async def main():
        body = json.dumps(EXPLORE).encode()
        tasks = [asyncio.create_task(_explorer(host, port, headers, body, stop, tally)) for _ in range(clients)]
        started.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(main())


def attack_explore(http_port, grpc_port, *, host="127.0.0.1", token=None, session_cookie=None, clients=200,
                   elections=5, size=5, grpcurl=GRPCURL, warmup_s=1.0):
    """Fire `clients` concurrent /lab/explore requests (as many lab tabs would, each sending its next
    explore as soon as the last is answered) while `elections` LIVE bully elections of `size` nodes
    run one after another; time the same elections before the flood.

    `token`: the controller's auth.token (the explorer takes what CheckAlgorithm takes), sent as
    `Authorization: Bearer`, and to grpcurl; `session_cookie`: the `ringleader-session=...` cookie a
    browser holds when the controller has auth.protect_reads (the bearer alone also passes).

    Returns a dict: `baseline_ms` and `under_ms` (wall ms of each grpcurl StartElection, before and
    during the flood), `baseline_election_ms` / `under_election_ms` (the elections' own durationMs),
    `errors` (elections that failed), `answered`, `refused`, `failed` (explores: answered 200,
    refused with a status, connection errors) and `refusals` ({"<status> <message>": count}).
    """
    headers = [("content-type", "application/json"), ("x-ringleader-lab", "1"),
               ("origin", f"http://{host}:{http_port}"), ("sec-fetch-site", "same-origin")]
    if token:
        headers.append(("authorization", f"Bearer {token}"))
    if session_cookie:
        headers.append(("cookie", session_cookie))
    result = {"baseline_ms": [], "baseline_election_ms": [], "under_ms": [], "under_election_ms": [], "errors": []}
    for _ in range(elections):
        wall, own, err = _live_election(grpc_port, host, token, grpcurl, size)
        result["baseline_ms"].append(round(wall, 1))
        result["baseline_election_ms"].append(own)
        if err:
            result["errors"].append(f"before: {err}")
    tally = {"answered": 0, "refused": 0, "failed": 0, "refusals": {}}
    stop, started = threading.Event(), threading.Event()
    flood = threading.Thread(target=_flood, args=(host, http_port, headers, clients, stop, tally, started), daemon=True)
    flood.start()
    started.wait(10)
    time.sleep(warmup_s)
    try:
        for _ in range(elections):
            wall, own, err = _live_election(grpc_port, host, token, grpcurl, size)
            result["under_ms"].append(round(wall, 1))
            result["under_election_ms"].append(own)
            if err:
                result["errors"].append(f"during: {err}")
    finally:
        stop.set()
        flood.join(40)
    result.update(tally)
    return result


def summary(r):
    """One line of `attack_explore`'s result."""
    med = lambda xs: round(statistics.median(xs), 1) if xs else None  # noqa: E731
    return (f"LIVE election {med(r['baseline_ms'])} ms before, {med(r['under_ms'])} ms (max {max(r['under_ms'] or [0])})"
            f" under the flood (own durationMs {r['baseline_election_ms']} -> {r['under_election_ms']}); explores "
            f"answered {r['answered']}, refused {r['refused']}, failed {r['failed']}; "
            f"refusals {dict(list(r['refusals'].items())[:3])}; errors {r['errors'][:2]}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--http", type=int, required=True, help="the controller's HTTP port (metrics_listen)")
    ap.add_argument("--grpc", type=int, required=True, help="the controller's gRPC port")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--token", default=os.environ.get("RINGLEADER_TOKEN"))
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--elections", type=int, default=5)
    a = ap.parse_args()
    print(summary(attack_explore(a.http, a.grpc, host=a.host, token=a.token, clients=a.clients,
                                 elections=a.elections)))
