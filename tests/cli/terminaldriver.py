# SPDX-License-Identifier: Apache-2.0
"""Runs replhost-cli in a pseudo-terminal with pexpect and types at it, as a person would, for the
CLI tests.

Usage: terminaldriver.py STEP... -- COMMAND ARGUMENT... Each step is "expect:TEXT" (wait for TEXT
on the terminal), "send:LINE" (type LINE and Enter), "ctrl-c" or "ctrl-d". After the steps it
waits for the command to end and prints {"output": everything the terminal showed, "status":
its exit status} as JSON.
"""
import json
import sys

import pexpect

# Far longer than any step takes: a guard against a hung client, it times nothing.
TIMEOUT = 120


def main():
    split = sys.argv.index("--")
    steps, command = sys.argv[1:split], sys.argv[split + 1:]
    child = pexpect.spawn(command[0], command[1:], encoding="utf-8", timeout=TIMEOUT, dimensions=(50, 200))
    shown = ""
    for step in steps:
        kind, _, text = step.partition(":")
        try:
            if kind == "expect":
                child.expect_exact(text)
                shown += child.before + child.after
            elif kind == "send":
                child.sendline(text)
            elif kind == "ctrl-c":
                child.sendintr()
            elif kind == "ctrl-d":
                child.sendeof()
            else:
                sys.exit("unknown step %r" % step)
        except pexpect.TIMEOUT:
            sys.exit("timed out at %r; the terminal showed: %r" % (step, shown + child.before))
        except pexpect.EOF:
            sys.exit("the command ended before %r; the terminal showed: %r" % (step, shown + child.before))
    child.expect(pexpect.EOF)
    shown += child.before
    child.close()
    json.dump({"output": shown.replace("\r\n", "\n"), "status": child.exitstatus}, sys.stdout)


if __name__ == "__main__":
    main()
