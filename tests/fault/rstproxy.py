"""A small TCP proxy for connection-reset faults: console -> proxy -> service.

`Proxy(host, port)` listens on 127.0.0.1 (a free port) and forwards every connection to
host:port. On command it resets connections the way a crashed middlebox or a kernel does:
SO_LINGER {on, 0} then close(), so the peer gets an RST, not a FIN.

    p = Proxy("127.0.0.1", 5432)
    p.reset_all()        # RST every open connection (both sides); new ones pass
    p.block()            # RST every open connection and every new one until unblock()
    p.unblock()
    p.requests           # HTTP request lines seen from clients: [(method, path), ...]
    p.reset_after(r"/retry$", 0.5)   # RST that connection 0.5 s after forwarding such a request

All socket work happens on the proxy's own thread (selectors); commands are queued to it
and wait for it to run them, so a command has taken effect when it returns.
"""
import queue
import re
import selectors
import socket
import struct
import threading
import time

REQ_RE = re.compile(rb"(GET|POST|PUT|PATCH|DELETE|HEAD) (/\S*) HTTP/1\.[01]\r\n")
LINGER0 = struct.pack("ii", 1, 0)


def rst(sock):
    """Close with an RST (SO_LINGER 0)."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER0)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


class Pair:
    def __init__(self, client, upstream):
        self.client, self.upstream = client, upstream
        self.scan = b""          # the tail of the client stream not yet matched (request lines)
        self.reset_at = None     # monotonic time to reset this pair (reset_after)


class Proxy:
    def __init__(self, host, port):
        self.target = (host, port)
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(64)
        self.lsock.setblocking(False)
        self.port = self.lsock.getsockname()[1]
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.lsock, selectors.EVENT_READ, None)
        self.wake_r, self.wake_w = socket.socketpair()
        self.sel.register(self.wake_r, selectors.EVENT_READ, "wake")
        self.cmds = queue.Queue()
        self.pairs = []
        self.blocked = False
        self.requests = []       # (method, path) from every client stream, in order
        self.resets = 0          # connections reset (each pair counts once)
        self.accepted = 0
        self.rst_rule = None     # (compiled path regex, delay seconds)
        self.running = True
        self.thread = threading.Thread(target=self._loop, name="rstproxy", daemon=True)
        self.thread.start()

    # ---- commands (any thread) ----------------------------------------------------------
    def _call(self, fn):
        done = threading.Event()
        box = []
        self.cmds.put((fn, box, done))
        self.wake_w.send(b"x")
        if not done.wait(10):
            raise RuntimeError("rstproxy: the proxy thread did not answer")
        return box[0] if box else None

    def reset_all(self):
        """RST every open connection; returns how many pairs were reset."""
        return self._call(self._reset_all)

    def block(self):
        """Reset everything open and every new connection until unblock()."""
        def go():
            self.blocked = True
            return self._reset_all()
        return self._call(go)

    def unblock(self):
        def go():
            self.blocked = False
        self._call(go)

    def reset_after(self, path_re, delay):
        """RST a connection `delay` s after it forwarded a request whose path matches."""
        def go():
            self.rst_rule = (re.compile(path_re.encode()), delay)
        self._call(go)

    def count(self, method, path_re):
        rx = re.compile(path_re)
        return sum(1 for m, p in list(self.requests) if m == method and rx.search(p))

    def open_connections(self):
        return self._call(lambda: len(self.pairs))

    def close(self):
        if not self.running:
            return
        def go():
            self.running = False
            self._reset_all()
        try:
            self._call(go)
        except RuntimeError:
            pass
        self.thread.join(5)
        for s in (self.lsock, self.wake_r, self.wake_w):
            s.close()
        self.sel.close()

    # ---- the proxy thread ---------------------------------------------------------------
    def _reset_all(self):
        n = len(self.pairs)
        for p in list(self.pairs):
            self._drop(p, True)
        return n

    def _drop(self, p, reset):
        if p not in self.pairs:
            return
        self.pairs.remove(p)
        for s in (p.client, p.upstream):
            try:
                self.sel.unregister(s)
            except (KeyError, ValueError):
                pass
            if reset:
                rst(s)
            else:
                s.close()
        if reset:
            self.resets += 1

    def _accept(self):
        try:
            c, _ = self.lsock.accept()
        except OSError:
            return
        self.accepted += 1
        if self.blocked:
            rst(c)
            self.resets += 1
            return
        try:
            u = socket.create_connection(self.target, timeout=3)
        except OSError:
            rst(c)                      # the service is gone: the client sees a reset
            return
        for s in (c, u):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.settimeout(5)             # sendall to a stuck peer ends the pair, not the proxy
        p = Pair(c, u)
        self.pairs.append(p)
        self.sel.register(c, selectors.EVENT_READ, (p, "c"))
        self.sel.register(u, selectors.EVENT_READ, (p, "u"))

    def _scan(self, p, data):
        p.scan += data
        end = 0
        for m in REQ_RE.finditer(p.scan):
            self.requests.append((m.group(1).decode(), m.group(2).decode(errors="replace")))
            end = m.end()
            if self.rst_rule and self.rst_rule[0].search(m.group(2)):
                p.reset_at = time.monotonic() + self.rst_rule[1]
        p.scan = p.scan[end:][-1024:]

    def _forward(self, p, side):
        src, dst = (p.client, p.upstream) if side == "c" else (p.upstream, p.client)
        try:
            data = src.recv(65536)
        except OSError:
            self._drop(p, True)          # reset by one side: pass the reset on
            return
        if not data:
            self._drop(p, False)         # an orderly close: close the other side too
            return
        try:
            dst.sendall(data)
        except OSError:
            self._drop(p, True)
            return
        if side == "c":
            self._scan(p, data)

    def _loop(self):
        while self.running:
            now = time.monotonic()
            due = [p.reset_at for p in self.pairs if p.reset_at is not None]
            timeout = max(0.0, min(due) - now) if due else 0.5
            for key, _ in self.sel.select(timeout):
                if key.data is None:
                    self._accept()
                elif key.data == "wake":
                    self.wake_r.recv(4096)
                    while not self.cmds.empty():
                        fn, box, done = self.cmds.get()
                        box.append(fn())
                        done.set()
                else:
                    p, side = key.data
                    if p in self.pairs:
                        self._forward(p, side)
            now = time.monotonic()
            for p in list(self.pairs):
                if p.reset_at is not None and now >= p.reset_at:
                    self._drop(p, True)
