// SPDX-License-Identifier: Apache-2.0
#include "figurereporter.h"

#include <unistd.h>

#include <cstdio>

namespace replhost::bench {

void FigureReporter::ReportRuns(const std::vector<Run> &runs)
{
    ConsoleReporter::ReportRuns(runs);
    for (const Run &run : runs) {
        if (run.error_occurred)
            continue;
        const bool aggregate = run.run_type == Run::RT_Aggregate;
        if (aggregate && run.aggregate_name != "median")
            continue;
        Figure &figure = m_figures[run.run_name.function_name];
        if (!aggregate && figure.fromAggregate)
            continue;
        figure.counters.clear();
        for (const auto &[name, counter] : run.counters)
            figure.counters[name] = double(counter);
        figure.p50Us = figure.counter("p50_us");
        figure.meanUs = run.GetAdjustedRealTime();
        figure.fromAggregate = aggregate;
    }
}

void FigureReporter::runAndSummarise(const std::function<void(const FigureReporter &)> &summary)
{
    FigureReporter reporter(isatty(STDOUT_FILENO) ? OO_ColorTabular : OO_Tabular);
    benchmark::RunSpecifiedBenchmarks(&reporter);
    summary(reporter);
    benchmark::Shutdown();
}

const FigureReporter::Figure *FigureReporter::figure(const std::string &name) const
{
    const auto it = m_figures.find(name);
    return it == m_figures.end() ? nullptr : &it->second;
}

std::string FigureReporter::medianAndMean(const Figure *figure)
{
    if (!figure)
        return "-";
    char text[64];
    std::snprintf(text, sizeof text, "%.1f (%.1f)", figure->p50Us, figure->meanUs);
    return text;
}

} // namespace replhost::bench
