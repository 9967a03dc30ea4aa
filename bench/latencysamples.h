// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <vector>

namespace replhost::bench {

// Per-iteration latencies, for percentiles: the VM is noisy, so the median says more than the
// mean Google Benchmark reports, and the tail says whether a figure is trustworthy.
//
// Threading: one thread at a time (a value).
class LatencySamples {
public:
    explicit LatencySamples(benchmark::IterationCount expected = 0);

    void add(std::chrono::steady_clock::duration d);
    void add(double ns) { m_ns.push_back(ns); }
    size_t size() const { return m_ns.size(); }

    // Nearest-rank percentile in µs (0 without samples); sorts in place.
    double percentileUs(double p);

    // Counters p50_us, p90_us and p99_us.
    void report(benchmark::State &state);

private:
    std::vector<double> m_ns;
};

} // namespace replhost::bench
