// SPDX-License-Identifier: Apache-2.0
#include "latencysamples.h"

#include <algorithm>

namespace replhost::bench {

LatencySamples::LatencySamples(benchmark::IterationCount expected)
{
    m_ns.reserve(size_t(expected));
}

void LatencySamples::add(std::chrono::steady_clock::duration d)
{
    m_ns.push_back(double(std::chrono::nanoseconds(d).count()));
}

double LatencySamples::percentileUs(double p)
{
    if (m_ns.empty())
        return 0;
    std::sort(m_ns.begin(), m_ns.end());
    const size_t rank = std::min(m_ns.size() - 1, size_t(p / 100.0 * double(m_ns.size())));
    return m_ns[rank] / 1000.0;
}

void LatencySamples::report(benchmark::State &state)
{
    state.counters["p50_us"] = percentileUs(50);
    state.counters["p90_us"] = percentileUs(90);
    state.counters["p99_us"] = percentileUs(99);
}

} // namespace replhost::bench
