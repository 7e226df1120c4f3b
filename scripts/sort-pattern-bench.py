#!/usr/bin/env python3
"""SORT ... BY with a long pattern on two running servers, side by side.

Usage: scripts/sort-pattern-bench.py PORT_A PORT_B [ELEMENTS] [PATTERN_BYTES]

Fills the list `l` on each server (127.0.0.1) with ELEMENTS numbers (default 100,000),
then times `SORT l BY w_<PATTERN_BYTES x>* LIMIT 0 1` three times and prints each
server's times, the medians and their ratio A/B. Each element costs one key of about
PATTERN_BYTES built and looked up, so the figure is that work's rate.
"""
import socket
import statistics
import sys
import time


def cmd(s, *args):
    out = b'*%d\r\n' % len(args) + b''.join(b'$%d\r\n%s\r\n' % (len(a), a) for a in args)
    s.sendall(out)
    buf = b''
    while not buf.endswith(b'\r\n'):
        chunk = s.recv(1 << 20)
        if not chunk:
            raise ConnectionError('the server closed the connection')
        buf += chunk
    return buf


def main():
    ports = [int(sys.argv[1]), int(sys.argv[2])]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
    width = int(sys.argv[4]) if len(sys.argv) > 4 else 100_000
    pattern = b'w_' + b'x' * width + b'*'
    medians = []
    for port in ports:
        s = socket.create_connection(('127.0.0.1', port))
        cmd(s, b'DEL', b'l')
        for i in range(0, n, 1000):
            cmd(s, b'RPUSH', b'l', *[str(j).encode() for j in range(i, min(i + 1000, n))])
        times = []
        for _ in range(3):
            t = time.time()
            cmd(s, b'SORT', b'l', b'BY', pattern, b'LIMIT', b'0', b'1')
            times.append(time.time() - t)
        medians.append(statistics.median(times))
        print(port, [round(x, 2) for x in times], 'median', round(medians[-1], 2))
    print('A/B', round(medians[0] / medians[1], 2))


if __name__ == '__main__':
    main()
