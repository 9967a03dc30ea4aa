# SPDX-License-Identifier: Apache-2.0
"""Runs the Python plugin's driver the way the host does, for counting its instructions.

Starts the driver with fd 3 and 4 on pipes and fd 1 and 2 on pipes that it keeps empty (as the
host does, so the driver may leave out the mark of `done`, protocol section 5), sends `init`,
then N `execute` requests of one cell, each waited for until its `done`. An instruction counter
is put in front of the driver with the remaining arguments, so the difference between two
counts of different N is the cost of one run:

  driver_loop.py N DRIVER PYTHON [WRAPPER...]
  driver_loop.py 100 plugins/python/driver.py /usr/bin/python3 \\
      valgrind --tool=callgrind --callgrind-out-file=cg.100

The interpreter gets the plugin's flags (-u -X utf8). CODE in the environment replaces the
cell (default "x = 1"). Exits non-zero when a run does not end "ok".
"""
import fcntl
import json
import os
import subprocess
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    runs, driver, python, wrapper = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
    requests, events, out, err = os.pipe(), os.pipe(), os.pipe(), os.pipe()

    def child():
        os.dup2(requests[0], 3)
        os.dup2(events[1], 4)
        os.dup2(out[1], 1)
        os.dup2(err[1], 2)

    worker = subprocess.Popen(wrapper + [python, "-u", "-X", "utf8", driver],
                              pass_fds=(3, 4), preexec_fn=child)
    for fd in (requests[0], events[1], out[1], err[1]):
        os.close(fd)
    for fd in (out[0], err[0]):
        os.set_blocking(fd, False)
    buffer = bytearray()

    def send(request):
        # Compact, with the members in the host's order (sdk/src/workerprocess.cpp).
        body = json.dumps(request, separators=(",", ":")).encode()
        os.write(requests[1], b"%d\n" % len(body) + body)

    def read_events():
        chunk = os.read(events[0], 1 << 16)
        if not chunk:
            sys.exit("the driver exited (status %s)" % worker.wait())
        buffer.extend(chunk)

    def receive():
        while b"\n" not in buffer:
            read_events()
        header, _, _ = buffer.partition(b"\n")
        end = len(header) + 1 + int(header)
        while len(buffer) < end:
            read_events()
        event = json.loads(buffer[len(header) + 1:end])
        del buffer[:end]
        return event

    def drain():
        for fd in (out[0], err[0]):
            try:
                while os.read(fd, 1 << 16):
                    pass
            except BlockingIOError:
                pass

    send({"type": "init", "id": "init-1", "protocol": 1, "mark_nonce": "0123456789abcdef",
          "options": {}})
    if receive().get("type") != "hello":
        sys.exit("the driver did not answer init with hello")
    code = os.environ.get("CODE", "x = 1")
    no_change = {"set": {}, "unset": []}
    failed = 0
    for n in range(1, runs + 1):
        send({"type": "execute", "id": "run-%d" % n, "code": code, "execution_count": n,
              "env": {"context": no_change, "exec": no_change}})
        while True:
            event = receive()
            if event.get("type") == "done":
                break
        failed += event.get("status") != "ok"
        drain()
    os.close(requests[1])
    worker.wait()
    if failed:
        sys.exit("%d of %d runs did not end \"ok\"" % (failed, runs))


if __name__ == "__main__":
    main()
