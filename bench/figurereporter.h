// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace replhost::bench {

// The console table as usual, plus what a summary printed after it needs: per case, the median
// and mean per iteration and every counter (from the "median" aggregate when
// --benchmark_repetitions is used, else from the single run).
//
// Threading: Google Benchmark's thread (the reporter is called between cases).
class FigureReporter : public benchmark::ConsoleReporter {
public:
    struct Figure {
        double p50Us = 0;   // the p50_us counter, 0 if the case has none
        double meanUs = 0;  // Google Benchmark's real time per iteration
        bool fromAggregate = false;
        std::map<std::string, double> counters;

        double counter(const std::string &name) const
        {
            const auto it = counters.find(name);
            return it == counters.end() ? 0 : it->second;
        }
    };

    using ConsoleReporter::ConsoleReporter;

    // Runs the registered cases with a FigureReporter on the console (in colour on a terminal),
    // then `summary` with the figures, then shuts Google Benchmark down.
    static void runAndSummarise(const std::function<void(const FigureReporter &)> &summary);

    void ReportRuns(const std::vector<Run> &runs) override;

    // The figure of the case named `name` (its function name), or null when it did not run or
    // failed.
    const Figure *figure(const std::string &name) const;

    // "<median> (<mean>)" in µs with one decimal, or "-" for a case that did not run.
    static std::string medianAndMean(const Figure *figure);

private:
    std::map<std::string, Figure> m_figures;
};

} // namespace replhost::bench
