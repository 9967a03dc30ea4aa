#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Sends one request to a running replhost-server again and again over one keep-alive
connection: a warm-up, then a command (--before), the measured requests, and a command (--after).
The commands are where a profiler is switched on and read (callgrind_control, strace); see
bench/README.md, "What Qt HttpServer's parser costs per request, and our layer around it".

  http_requests.py --port P --token T --case run|healthz [--warmup 300] [--count 1000]
                   [--before CMD] [--after CMD]

run:     POST /v1/contexts/{id}/executions?wait=true of {"code":"x = 1"} in a new Python context.
healthz: GET /healthz.
Each answer is read whole (Content-Length) before the next request is sent; any status but 200
stops the script.
"""
import argparse
import json
import socket
import subprocess
import sys


def read_answer(sock, pending):
    """Returns (status, body, bytes after the answer)."""
    while b"\r\n\r\n" not in pending:
        pending += receive(sock)
    head, _, rest = pending.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        rest += receive(sock)
    return int(head.split(b" ", 2)[1]), rest[:length], rest[length:]


def receive(sock):
    chunk = sock.recv(65536)
    if not chunk:
        sys.exit("the server closed the connection")
    return chunk


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--case", choices=["run", "healthz"], required=True)
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--before", default="")
    parser.add_argument("--after", default="")
    args = parser.parse_args()

    sock = socket.create_connection(("127.0.0.1", args.port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def request(method, path, body=None, token=True):
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{args.port}\r\n"
        if token:
            head += f"Authorization: Bearer {args.token}\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        return (head + "\r\n").encode() + (body or b"")

    pending = b""
    if args.case == "run":
        sock.sendall(request("POST", "/v1/contexts", b'{"language":"python"}'))
        status, body, pending = read_answer(sock, pending)
        if status not in (200, 201):
            sys.exit(f"creating the context: {status} {body!r}")
        context = json.loads(body)["id"]
        one = request("POST", f"/v1/contexts/{context}/executions?wait=true", b'{"code":"x = 1"}')
    else:
        one = request("GET", "/healthz", token=False)

    def send(times):
        nonlocal pending
        for _ in range(times):
            sock.sendall(one)
            status, body, pending = read_answer(sock, pending)
            if status != 200:
                sys.exit(f"{status} {body!r}")

    send(args.warmup)
    if args.before:
        subprocess.run(args.before, shell=True, check=True)
    send(args.count)
    if args.after:
        subprocess.run(args.after, shell=True, check=True)


if __name__ == "__main__":
    main()
