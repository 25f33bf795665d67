#!/usr/bin/python3
"""A real AMQP 0-9-1 consumer that never acknowledges (tiny hand-written client: no pika).

  /usr/bin/python3 tests/stack/amqp_consumer.py --env-file DIR/env --queue worker.1.executions
        [--prefetch 1]

Started by stack.sh so that the broker has a queue WITH a consumer (and unacknowledged
messages) next to the ones without. It holds `prefetch` messages unacked forever and
re-subscribes whenever the queue disappears (fixture reloads delete and recreate queues).
"""
import argparse
import os
import signal
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stacklib  # noqa: E402

FRAME_METHOD, FRAME_HEADER, FRAME_BODY, FRAME_HEARTBEAT = 1, 2, 3, 8
FRAME_END = b"\xce"


def shortstr(s):
    b = s.encode()
    return struct.pack("B", len(b)) + b


def longstr(b):
    return struct.pack(">I", len(b)) + b


def table(d):
    out = b""
    for k, v in d.items():
        if isinstance(v, bool):
            out += shortstr(k) + b"t" + struct.pack("B", v)
        elif isinstance(v, dict):
            out += shortstr(k) + b"F" + table(v)
        else:
            out += shortstr(k) + b"S" + longstr(str(v).encode())
    return longstr(out)


class Conn:
    def __init__(self, port, user, password, timeout=10):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""
        self.s.sendall(b"AMQP\x00\x00\x09\x01")
        self.expect(0, 10, 10)                                    # Connection.Start
        self.method(0, 10, 11, table({"product": "redrive-fixture-consumer",
                                      "capabilities": {"consumer_cancel_notify": True}})
                    + shortstr("PLAIN") + longstr(b"\0" + user.encode() + b"\0" + password.encode())
                    + shortstr("en_US"))
        _, args = self.expect(0, 10, 30)                          # Connection.Tune
        channel_max, frame_max, _hb = struct.unpack(">HIH", args[:8])
        self.method(0, 10, 31, struct.pack(">HIH", channel_max, frame_max, 0))  # no heartbeats
        self.method(0, 10, 40, shortstr("/") + shortstr("") + b"\x00")
        self.expect(0, 10, 41)                                    # Open-Ok
        self.s.settimeout(None)

    def send(self, ftype, ch, payload):
        self.s.sendall(struct.pack(">BHI", ftype, ch, len(payload)) + payload + FRAME_END)

    def method(self, ch, cls, mid, args=b""):
        self.send(FRAME_METHOD, ch, struct.pack(">HH", cls, mid) + args)

    def frame(self):
        while True:
            if len(self.buf) >= 7:
                ftype, ch, size = struct.unpack(">BHI", self.buf[:7])
                if len(self.buf) >= 8 + size:
                    payload = self.buf[7:7 + size]
                    self.buf = self.buf[8 + size:]
                    return ftype, ch, payload
            data = self.s.recv(65536)
            if not data:
                raise ConnectionError("broker closed the connection")
            self.buf += data

    def next_method(self):
        """Next method frame (skipping content frames): (channel, class, method, args)."""
        while True:
            ftype, ch, payload = self.frame()
            if ftype == FRAME_METHOD:
                cls, mid = struct.unpack(">HH", payload[:4])
                return ch, cls, mid, payload[4:]

    def expect(self, ch, cls, mid):
        c, k, m, args = self.next_method()
        if (k, m) == (10, 50):
            raise ConnectionError("connection closed by broker: %r" % args[:200])
        if (c, k, m) != (ch, cls, mid):
            return self.fail(c, k, m, args)
        return c, args

    def fail(self, c, k, m, args):
        if (k, m) == (20, 40):   # Channel.Close: reply-code, reply-text
            code = struct.unpack(">H", args[:2])[0]
            self.method(c, 20, 41)                                # Close-Ok
            raise LookupError("channel closed: %d %r" % (code, args[3:3 + args[2]]))
        raise ConnectionError("unexpected method %d.%d on channel %d" % (k, m, c))


def consume_forever(env, queue, prefetch, log):
    conn = Conn(int(env["RD_RABBIT_AMQP_PORT"]), env["RD_RABBIT_USER"], env["RD_RABBIT_PASSWORD"])
    ch = 0
    while True:
        ch += 1
        conn.method(ch, 20, 10, shortstr(""))                   # Channel.Open
        conn.expect(ch, 20, 11)
        conn.method(ch, 60, 10, struct.pack(">IHB", 0, prefetch, 0))   # Basic.Qos
        conn.expect(ch, 60, 11)
        conn.method(ch, 60, 20, struct.pack(">H", 0) + shortstr(queue) + shortstr("redrive-fixture")
                    + b"\x00" + table({}))                        # Basic.Consume (manual ack)
        try:
            conn.expect(ch, 60, 21)
        except LookupError as e:                                  # no such queue (yet)
            log("%s; retrying" % e)
            time.sleep(0.5)
            continue
        log("consuming %s (prefetch %d, never acking)" % (queue, prefetch))
        while True:
            c, k, m, args = conn.next_method()
            if (k, m) == (60, 60):       # Basic.Deliver: keep it unacked
                continue
            if (k, m) == (60, 30):       # Basic.Cancel from the broker: the queue was deleted
                log("consumer cancelled by the broker (queue deleted); re-subscribing")
                conn.method(c, 20, 40, struct.pack(">H", 200) + shortstr("bye") + struct.pack(">HH", 0, 0))
                continue                 # wait for Close-Ok
            if (k, m) == (20, 40):       # the broker closed the channel
                conn.method(c, 20, 41)
                break
            if (k, m) == (20, 41):       # Close-Ok for our Close
                break
            if (k, m) == (10, 50):
                raise ConnectionError("connection closed by broker")
        time.sleep(0.2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--env-file", required=True)
    ap.add_argument("--queue", default="worker.1.executions")
    ap.add_argument("--prefetch", type=int, default=1)
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    def log(msg):
        print("amqp_consumer: %s" % msg, file=sys.stderr, flush=True)
    while True:
        try:
            consume_forever(stacklib.parse_env_file(a.env_file), a.queue, a.prefetch, log)
        except (OSError, ConnectionError, struct.error) as e:
            log("%s; reconnecting in 1 s" % e)
            time.sleep(1)


if __name__ == "__main__":
    main()
