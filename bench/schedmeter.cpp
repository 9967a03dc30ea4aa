// SPDX-License-Identifier: Apache-2.0
#include "schedmeter.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace replhost::bench {

SchedUse schedUse(pid_t pid, bool withChildren)
{
    SchedUse total;
    std::error_code ec;
    const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
    for (const auto &task : std::filesystem::directory_iterator(tasks, ec)) {
        std::ifstream schedstat(task.path() / "schedstat");
        long long onCpu = 0, waiting = 0, runs = 0;
        if (schedstat >> onCpu >> waiting >> runs)
            total += SchedUse{onCpu, runs};
        if (!withChildren)
            continue;
        std::ifstream children(task.path() / "children");
        for (pid_t child; children >> child;)
            total += schedUse(child);
    }
    return total;
}

SchedUse hostUse()
{
    return schedUse(getpid(), false);
}

void settleProcess(pid_t pid, int maxMs)
{
    using Clock = std::chrono::steady_clock;
    constexpr int64_t kWindowNs = 100'000'000;
    constexpr int64_t kIdleNs = 2'000'000;  // under 2% of one CPU counts as settled
    const auto deadline = Clock::now() + std::chrono::milliseconds(maxMs);
    for (int64_t before = schedUse(pid, false).cpuNs; Clock::now() < deadline;) {
        std::this_thread::sleep_for(std::chrono::nanoseconds(kWindowNs));
        const int64_t after = schedUse(pid, false).cpuNs;
        if (after - before < kIdleNs)
            return;
        before = after;
    }
}

void settleHost(int maxMs)
{
    settleProcess(getpid(), maxMs);
}

SchedMeter::SchedMeter(std::vector<Watched> others) : m_others(std::move(others))
{
    settleAll();
    for (const Watched &watched : m_others)
        m_start.push_back(schedUse(watched.pid, watched.withChildren));
    m_host = hostUse();
}

void SchedMeter::settleAll()
{
    settleHost();
    for (const Watched &watched : m_others) {
        if (watched.settle)
            settleProcess(watched.pid);
    }
}

void SchedMeter::report(benchmark::State &state)
{
    settleAll();
    const double n = double(std::max<benchmark::IterationCount>(1, state.iterations()));
    auto put = [&](const std::string &name, const SchedUse &used) {
        state.counters[name + "_cpu_us"] = double(used.cpuNs) / n / 1000.0;
        state.counters[name + "_runs"] = double(used.runs) / n;
    };
    put("host", hostUse() - m_host);
    for (size_t i = 0; i < m_others.size(); ++i)
        put(m_others[i].name, schedUse(m_others[i].pid, m_others[i].withChildren) - m_start[i]);
}

} // namespace replhost::bench
