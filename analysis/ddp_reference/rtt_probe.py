"""Round-trip time through the emulated link: TCP ping-pong of 64-byte messages.

    python3 rtt_probe.py serve PORT            # in one node's namespace
    python3 rtt_probe.py probe ADDR PORT [N]   # in the other's; prints JSON

The link's delay is what the iperf3 goodput does not show; one TCP
connection with Nagle off and one small message in flight at a time
measures the RTT the ranks' collectives see (both directions' delay plus
the LAN hops and the kernel), not queueing, because nothing else is sent.
"""

import json
import socket
import statistics
import sys
import time

MESSAGE = b"x" * 64


def recv_exactly(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("peer closed")
        data += chunk
    return data


def serve(port):
    with socket.create_server(("0.0.0.0", port)) as server:
        conn, _ = server.accept()
        with conn:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                while True:
                    conn.sendall(recv_exactly(conn, len(MESSAGE)))
            except ConnectionError:
                pass


def probe(addr, port, count):
    # The server may still be starting in the other namespace.
    deadline = time.monotonic() + 10
    while True:
        try:
            sock = socket.create_connection((addr, port), timeout=10)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    with sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        rtts = []
        for i in range(count + 2):
            t0 = time.perf_counter()
            sock.sendall(MESSAGE)
            recv_exactly(sock, len(MESSAGE))
            if i >= 2:  # the first exchanges wake up the path's threads
                rtts.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"count": count, "rtt_median_ms": statistics.median(rtts),
                      "rtt_min_ms": min(rtts), "rtt_max_ms": max(rtts)}))


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "serve":
        serve(int(sys.argv[2]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "probe":
        probe(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 20)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
