// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <sys/types.h>

#include <vector>

namespace replhost::bench {

// CPU affinity for benchmarks that state their placement: a wake-up across CPUs costs about
// 20 µs on the reference VM, so where each process runs is part of what a latency figure means.
// A thread started or a process spawned afterwards inherits the affinity of its creator.
//
// Errors: false / a count of 0 when sched_setaffinity() refuses (or the process is gone).
// Threading: any thread; the kernel serialises affinity changes.

// `tid` 0 is the calling thread.
bool pinThread(pid_t tid, const std::vector<int> &cpus);
inline bool pinThread(pid_t tid, int cpu) { return pinThread(tid, std::vector<int>{cpu}); }

// Pins every thread of `pid` and of its descendants; returns how many threads were pinned.
// sched_setaffinity() moves one thread only, and the processes measured here run several
// (a server's history writer, a Jupyter kernel's ZeroMQ I/O threads).
int pinProcessTree(pid_t pid, const std::vector<int> &cpus);
inline int pinProcessTree(pid_t pid, int cpu) { return pinProcessTree(pid, std::vector<int>{cpu}); }

} // namespace replhost::bench
