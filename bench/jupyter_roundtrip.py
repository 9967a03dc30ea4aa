# SPDX-License-Identifier: Apache-2.0
"""The Jupyter side of bench_roundtrip and bench_kernel: one kernel (ipykernel unless another
kernelspec is named), driven through jupyter_client.

The benchmark times every round trip on its own clock. This helper turns each line it reads into
one execute request and answers once the kernel has both sent its execute_reply and gone idle on
IOPub: only then may a Jupyter client treat the execution as complete (before idle, output can
still arrive), and it is the criterion the baseline measurements used.

Protocol, one line each way:
  helper -> host   "ready <kernel pid> <kernel argv[0]> <jupyter_client> <ipykernel>" when warm
  host -> helper   code to execute (one line)
  helper -> host   "ok <ns>" with the helper's own timing of the round trip, so the host can show
                   what its pipe hop adds, or "error <message>"
End of input shuts the kernel down and ends the helper.
Usage: jupyter_roundtrip.py [warm-ups [kernelspec name, default python3]]
"""
import os
import sys
import time


def execute(kc, code):
    """One request: execute_request -> execute_reply (shell) and status idle (IOPub)."""
    msg_id = kc.execute(code)
    while True:
        reply = kc.get_shell_msg(timeout=30)
        if reply['parent_header'].get('msg_id') == msg_id and reply['msg_type'] == 'execute_reply':
            break
    while True:
        msg = kc.get_iopub_msg(timeout=30)
        if (msg['parent_header'].get('msg_id') == msg_id and msg['msg_type'] == 'status'
                and msg['content']['execution_state'] == 'idle'):
            break
    content = reply['content']
    if content['status'] != 'ok':
        raise RuntimeError('%s: %s' % (content.get('ename'), content.get('evalue')))


def main():
    warmups = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    kernel_name = sys.argv[2] if len(sys.argv) > 2 else 'python3'
    # The protocol keeps a private, non-inheritable copy of fd 1; fd 1 itself becomes stderr.
    # The kernel inherits fd 1, so without this anything it or a library prints would corrupt
    # the protocol, and the kernel would keep the host's pipe open after the helper is gone.
    replies = os.fdopen(os.dup(1), 'wb', buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    requests = sys.stdin.buffer

    import ipykernel
    import jupyter_client
    from jupyter_client import KernelManager

    # Quiets the kernel's debugger start-up notice about frozen modules (it validates nothing
    # the benchmark needs), which would otherwise land in the benchmark's output.
    os.environ.setdefault('PYDEVD_DISABLE_FILE_VALIDATION', '1')
    km = KernelManager(kernel_name=kernel_name)
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)
        for _ in range(warmups):
            execute(kc, 'x = 1')
        pid = km.provisioner.process.pid
        replies.write(('ready %d %s %s %s\n' % (pid, km.kernel_spec.argv[0],
                                                 jupyter_client.__version__,
                                                 ipykernel.__version__)).encode())
        clock = time.perf_counter_ns
        for line in iter(requests.readline, b''):
            try:
                start = clock()
                execute(kc, line.decode().rstrip('\n'))
                answer = 'ok %d\n' % (clock() - start)
            except Exception as e:  # reported to the host, which stops the benchmark
                answer = 'error %s\n' % str(e).replace('\n', ' ')
            replies.write(answer.encode())
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)


if __name__ == '__main__':
    main()
