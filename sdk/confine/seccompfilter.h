// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

// The seccomp filter of a sandboxed worker (docs/architecture.md, "Isolation", says why each
// system call is in it): everything is allowed except what lets code inside change or leave
// the sandbox, or attack the kernel through an interface it has no use for. A denied call fails
// with EPERM (clone3 with ENOSYS), so programs report it instead of being killed; a system call
// of another architecture (32-bit calls on x86-64) kills the process, since the filter does not
// describe them.
//
// Writes the filter as classic BPF to a new memory file (memfd) placed on `fd` (not close on
// exec, positioned at its start), for bwrap's --seccomp. Returns an empty string, or what
// failed. Built with libseccomp, which resolves system call numbers for this architecture.
std::string writeSeccompFilter(int fd);
