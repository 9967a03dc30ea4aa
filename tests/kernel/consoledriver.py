# SPDX-License-Identifier: Apache-2.0
"""Types cells into `jupyter console` (Debian's jupyter-console) through a pseudo-terminal with
pexpect, as a person would, for the kernel tests.

Usage: consoledriver.py KERNEL CELL... Starts `jupyter console --kernel KERNEL --simple-prompt`,
types each cell (one line) at its "In [n]:" prompt and collects what the console printed before
the next prompt, then ends the console with Ctrl-D (which shuts its kernel down). Prints
{"banner": text before the first prompt, "outputs": [text after each cell]} as JSON.
"""
import json
import re
import sys

import pexpect

# Far longer than any cell takes: a guard against a hung console, it times nothing.
TIMEOUT = 120
PROMPT = r"In \[\d+\]: "


def expect_prompt(console, after):
    """Waits for the next prompt; on a timeout ends with what the console showed meanwhile
    (the kernel's own stderr goes there too), so that a hang says where it was."""
    try:
        console.expect(PROMPT)
    except pexpect.TIMEOUT:
        sys.exit("no prompt within %d s %s; the console showed: %r" % (TIMEOUT, after, console.before))


def main():
    kernel, cells = sys.argv[1], sys.argv[2:]
    console = pexpect.spawn("jupyter", ["console", "--kernel", kernel, "--simple-prompt", "--no-confirm-exit"],
                            encoding="utf-8", timeout=TIMEOUT, dimensions=(50, 200))
    expect_prompt(console, "after the start")
    banner = console.before
    outputs = []
    for cell in cells:
        console.sendline(cell)
        expect_prompt(console, "after %r" % cell)
        # What follows the echoed cell, with the terminal's line ends made plain.
        printed = console.before.replace("\r\n", "\n")
        outputs.append(printed[printed.find("\n") + 1:] if "\n" in printed else "")
    console.sendeof()
    console.expect(pexpect.EOF)
    console.close()
    json.dump({"banner": banner.replace("\r\n", "\n"), "outputs": outputs, "status": console.exitstatus}, sys.stdout)


if __name__ == "__main__":
    main()
