// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <benchmark/benchmark.h>

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace replhost::bench {

// What the scheduler recorded for a set of threads: CPU time, and how many times one of them was
// switched onto a CPU. The counters built on it say where a round trip's work happens (host,
// server, worker, a client helper) and how often each side had to be woken for it.
struct SchedUse {
    int64_t cpuNs = 0;
    int64_t runs = 0;

    SchedUse &operator+=(const SchedUse &other)
    {
        cpuNs += other.cpuNs;
        runs += other.runs;
        return *this;
    }
    SchedUse operator-(const SchedUse &other) const
    {
        return {cpuNs - other.cpuNs, runs - other.runs};
    }
};

// Every thread of `pid`, and of its descendants when `withChildren`, from schedstat
// (on-CPU ns, wait ns, times run). A process that is gone counts nothing.
SchedUse schedUse(pid_t pid, bool withChildren = true);

// The benchmark process's own threads only: its children are workers or servers.
SchedUse hostUse();

// Waits until the threads of `pid` (not its children) have stopped working in the background,
// at most `maxMs`: an engine's history writer commits in batches and can trail the executions
// it records, and that backlog must neither disturb the next case nor escape the CPU counters
// of the case that caused it.
void settleProcess(pid_t pid, int maxMs = 30000);
void settleHost(int maxMs = 30000);

// Per iteration, across a timed loop: CPU time and runs of the host and of other processes, as
// counters "<name>_cpu_us" and "<name>_runs". Construct right before the loop; it settles the
// host (and every watched process marked `settle`) first, and again in report().
//
// Threading: the benchmark thread.
class SchedMeter {
public:
    struct Watched {
        std::string name;
        pid_t pid = 0;
        bool withChildren = true;  // false: the process's own threads, not its workers
        bool settle = false;       // wait for it to go idle, like the host
    };

    explicit SchedMeter(std::vector<Watched> others);

    // Call after the timed loop; includes the trailing background work of what it settles.
    void report(benchmark::State &state);

private:
    void settleAll();

    std::vector<Watched> m_others;
    std::vector<SchedUse> m_start;
    SchedUse m_host;
};

} // namespace replhost::bench
