# SPDX-License-Identifier: Apache-2.0
"""Drives a Jupyter kernel with jupyter_client, the library Notebook, JupyterLab and the consoles
are built on, for the kernel tests.

Reads {"kernel": NAME, "steps": [...]} as JSON on stdin, starts the kernel NAME from the
kernelspecs on JUPYTER_PATH, runs the steps in order and prints {"results": [...]} as JSON: for
each step the reply's content and the iopub messages (msg_type, content) it caused. Steps:
  {"op": "execute", "code": C, "interrupt_on": TEXT?}  interrupt (interrupt_request on control)
                                                       once a stream message contains TEXT
  {"op": "execute", "code": C, "allow_stdin": B?, "answers": [A...]?}
                                                       answers each input_request on the stdin
                                                       channel with the next A (a string); the
                                                       requests go to the step's "stdin"
  {"op": "complete", "code": C, "cursor": N?}, {"op": "inspect", "code": C, "cursor": N?},
  {"op": "is_complete", "code": C}, {"op": "kernel_info"},
  {"op": "history", ...the history_request's fields}
  {"op": "restart"}                                     shutdown_request with restart, new process
  {"op": "forged_execute", "code": C}                   an execute_request signed with a key that
                                                        is not the kernel's, sent on the shell
                                                        socket; no reply is waited for
The kernel is shut down at the end (shutdown_request, then jupyter_client's own ending), unless
"abandon" is true: then the driver prints its results with "kernel_pid" and dies on the spot, as a
crashed frontend would, leaving the kernel without a word.
"""
import json
import os
import queue
import sys
import time

from jupyter_client.manager import start_new_kernel
from jupyter_client.session import Session

# Far longer than any step takes: these guard against a hung kernel, they time nothing.
TIMEOUT = 120


def collect(kc, km, msg_id, interrupt_on=None, answers=None, stdin=None):
    iopub = []
    interrupted = False
    deadline = time.monotonic() + TIMEOUT
    while True:
        if answers is None:
            msg = kc.get_iopub_msg(timeout=TIMEOUT)
        else:
            # The kernel waits for an answer while it asks: look at both channels in turn.
            try:
                request = kc.get_stdin_msg(timeout=0.05)
                stdin.append({"msg_type": request["msg_type"], "content": request["content"]})
                kc.input(answers.pop(0) if answers else "")
            except queue.Empty:
                pass
            try:
                msg = kc.get_iopub_msg(timeout=0.05)
            except queue.Empty:
                if time.monotonic() > deadline:
                    raise
                continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        iopub.append({"msg_type": msg["msg_type"], "content": msg["content"]})
        if (interrupt_on and not interrupted and msg["msg_type"] == "stream"
                and interrupt_on in msg["content"]["text"]):
            interrupted = True
            km.interrupt_kernel()
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return iopub


def shell_reply(kc, msg_id):
    while True:
        reply = kc.get_shell_msg(timeout=TIMEOUT)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply


def main():
    script = json.load(sys.stdin)
    km, kc = start_new_kernel(kernel_name=script["kernel"], startup_timeout=TIMEOUT)
    results = []
    if script.get("abandon"):
        for step in script["steps"]:
            msg_id = kc.execute(step["code"])
            results.append({"reply": shell_reply(kc, msg_id)["content"], "iopub": collect(kc, km, msg_id)})
        json.dump({"results": results, "kernel_pid": km.provisioner.process.pid}, sys.stdout)
        sys.stdout.flush()
        os._exit(0)
    try:
        for step in script["steps"]:
            op = step["op"]
            if op == "restart":
                km.restart_kernel(now=False)
                kc.wait_for_ready(timeout=TIMEOUT)
                results.append({"reply": {}, "iopub": []})
                continue
            if op == "forged_execute":
                forger = Session(key=b"not-the-kernel-key", username=kc.session.username)
                forger.send(kc.shell_channel.socket, "execute_request",
                            {"code": step["code"], "silent": False, "store_history": True,
                             "user_expressions": {}, "allow_stdin": False})
                results.append({"reply": {}, "iopub": []})
                continue
            stdin = []
            if op == "execute":
                msg_id = kc.execute(step["code"], allow_stdin=step.get("allow_stdin", False))
            elif op == "complete":
                msg_id = kc.complete(step["code"], step.get("cursor"))
            elif op == "inspect":
                msg_id = kc.inspect(step["code"], step.get("cursor"))
            elif op == "is_complete":
                msg_id = kc.is_complete(step["code"])
            elif op == "kernel_info":
                msg_id = kc.kernel_info()
            elif op == "history":
                fields = {k: v for k, v in step.items() if k != "op"}
                msg_id = kc.history(**fields)
            else:
                raise ValueError("unknown step " + op)
            answers = list(step["answers"]) if "answers" in step else None
            iopub = collect(kc, km, msg_id, step.get("interrupt_on"), answers, stdin)
            reply = shell_reply(kc, msg_id)
            results.append({"reply": reply["content"], "iopub": iopub, "stdin": stdin})
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)
    json.dump({"results": results}, sys.stdout)


if __name__ == "__main__":
    main()
