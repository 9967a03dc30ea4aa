// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <QtGlobal>

namespace replhost::core {

// The machine's CPU and memory use, read from /proc (Linux). Contexts are processes of this
// machine, not containers, so this is what "the sandbox's" usage honestly is.
//
// CPU use is measured between two calls to sample(): the first call reports the average since
// boot. Errors: "io" (no /proc). Threading: one object per thread.
class HostUsage {
public:
    struct Sample {
        int cpuCount = 0;
        double cpuUsedPercent = 0;  // 0..100, over all CPUs
        qint64 memoryTotalMiB = 0;
        qint64 memoryUsedMiB = 0;   // total minus available
    };

    Result<Sample> sample();

private:
    quint64 m_lastBusy = 0;
    quint64 m_lastTotal = 0;
    double m_lastPercent = 0;
};

} // namespace replhost::core
