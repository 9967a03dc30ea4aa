// SPDX-License-Identifier: Apache-2.0
//
// Round trip of a trivial Python cell (`x = 1`) through jupyter_client, the library every Jupyter
// frontend is built on, side by side in one run:
//   replhost   jupyter_client → replhost-kernel → replhost-server (HTTP, SSE) → Python worker
//   ipykernel  jupyter_client → ipykernel, the Python kernel Jupyter ships
// with the same client (jupyter_roundtrip.py: execute_request, then execute_reply and IOPub
// idle, the point where a frontend may treat the cell as done). After the table, main() prints
// ipykernel / replhost, the figure the kernel's target is stated in (≥ 5).
//
// The server is the build's (the HTTP tests' ServerProcess: port 0, a temporary data dir, the
// build tree's plugins), its kernelspec written by the build's `replhost-cli kernelspec install`
// into a temporary Jupyter dir. Environment: REPLHOST_BENCH_PYTHON is the client's interpreter
// (default /usr/bin/python3, which has jupyter_client and ipykernel on Debian).

#include "figurereporter.h"
#include "latencysamples.h"
#include "linechild.h"
#include "serverprocess.h"

#include <benchmark/benchmark.h>

#include <QCoreApplication>
#include <QDir>
#include <QProcess>
#include <QTemporaryDir>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

namespace {

using namespace replhost::bench;
using Clock = std::chrono::steady_clock;

constexpr int kIterations = 1000;
constexpr int kWarmups = 100;
const std::string kReplhostKernel = "replhost-python";
const std::string kIpykernel = "python3";

struct Fixtures {
    QString python;
    ServerProcess server;
    QTemporaryDir jupyterHome;
    std::map<std::string, std::unique_ptr<LineChild>> clients;  // by kernelspec
    std::map<std::string, std::string> errors;
};

Fixtures *g_fixtures = nullptr;

// Jupyter finds replhost's kernelspec in the temporary home, and keeps its runtime files there.
std::string prepareJupyter(Fixtures &f)
{
    const QString home = f.jupyterHome.path();
    QProcess install;
    install.start(QStringLiteral(REPLHOST_CLI_EXECUTABLE),
                  {QStringLiteral("--data-dir"), f.server.dataDir(), QStringLiteral("kernelspec"), QStringLiteral("install"),
                   QStringLiteral("--prefix"), home, QStringLiteral("-l"), QStringLiteral("python")});
    if (!install.waitForFinished(60000) || install.exitCode() != 0)
        return "replhost-cli kernelspec install failed: " + install.readAllStandardError().toStdString();
    qputenv("JUPYTER_PATH", (home + QStringLiteral("/share/jupyter")).toUtf8());
    qputenv("JUPYTER_RUNTIME_DIR", (home + QStringLiteral("/runtime")).toUtf8());
    qputenv("JUPYTER_DATA_DIR", (home + QStringLiteral("/data")).toUtf8());
    return {};
}

LineChild *client(const std::string &kernel, std::string *error)
{
    Fixtures &f = *g_fixtures;
    if (f.clients.count(kernel))
        return f.clients[kernel].get();
    if (f.errors.count(kernel)) {
        *error = f.errors[kernel];
        return nullptr;
    }
    const QString script =
            QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("jupyter_roundtrip.py"));
    auto helper = std::make_unique<LineChild>();
    std::string ready;
    if (!helper->start({f.python.toStdString(), script.toStdString(), std::to_string(kWarmups), kernel}, error))
        return f.errors[kernel] = *error, nullptr;
    if (!helper->readLine(&ready, 180000) || ready.rfind("ready ", 0) != 0) {
        *error = f.errors[kernel] = "the Jupyter client of " + kernel + " did not become ready";
        return nullptr;
    }
    std::fprintf(stderr, "%s: %s\n", kernel.c_str(), ready.c_str());
    f.clients[kernel] = std::move(helper);
    return f.clients[kernel].get();
}

void BM_Kernel(benchmark::State &state, const std::string &kernel)
{
    std::string error;
    LineChild *helper = client(kernel, &error);
    if (!helper) {
        state.SkipWithError(error.c_str());
        return;
    }
    const std::string request = "x = 1\n";
    std::string reply;
    LatencySamples samples(state.max_iterations);
    bool ok = true;
    for (auto _ : state) {
        const auto start = Clock::now();
        ok = helper->writeAll(request) && helper->readLine(&reply) && reply.rfind("ok ", 0) == 0 && ok;
        samples.add(Clock::now() - start);
    }
    if (!ok)
        state.SkipWithError(("the kernel answered \"" + reply + "\"").c_str());
    samples.report(state);
    state.SetLabel(kernel);
}

void printSummary(const FigureReporter &reporter)
{
    const FigureReporter::Figure *replhost = reporter.figure("kernel/replhost");
    const FigureReporter::Figure *ipykernel = reporter.figure("kernel/ipykernel");
    std::printf("\n`x = 1` through jupyter_client, per round trip: median (mean) in µs\n");
    std::printf("%17s %17s %22s\n", "replhost-kernel", "ipykernel", "ipykernel/replhost");
    double ratio = 0;
    char ratioText[64] = "-";
    if (replhost && ipykernel && replhost->p50Us > 0) {
        ratio = ipykernel->p50Us / replhost->p50Us;
        std::snprintf(ratioText, sizeof ratioText, "%.2fx (%.2fx)", ratio, ipykernel->meanUs / replhost->meanUs);
    }
    std::printf("%17s %17s %22s\n", FigureReporter::medianAndMean(replhost).c_str(),
                FigureReporter::medianAndMean(ipykernel).c_str(), ratioText);
    std::printf("  ipykernel/replhost %s (target >= 5x)\n", ratio > 0 ? (ratio >= 5 ? "met" : "MISSED") : "n/a");
}

} // namespace

int main(int argc, char **argv)
{
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    QCoreApplication app(argc, argv);

    Fixtures fixtures;
    g_fixtures = &fixtures;
    fixtures.python = qEnvironmentVariable("REPLHOST_BENCH_PYTHON", QStringLiteral("/usr/bin/python3"));
    if (!fixtures.server.start()) {
        std::fprintf(stderr, "%s\n", qPrintable(fixtures.server.error()));
        return 1;
    }
    if (const std::string error = prepareJupyter(fixtures); !error.empty()) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return 1;
    }
    benchmark::AddCustomContext("python", fixtures.python.toStdString());
    benchmark::AddCustomContext("server", ServerProcess::executable().toStdString());

    for (const auto &[name, kernel] : {std::pair{"kernel/replhost", kReplhostKernel}, std::pair{"kernel/ipykernel", kIpykernel}})
        benchmark::RegisterBenchmark(name, BM_Kernel, kernel)->Iterations(kIterations)->UseRealTime()->Unit(benchmark::kMicrosecond);
    FigureReporter::runAndSummarise(printSummary);

    fixtures.clients.clear();
    fixtures.server.stop();
    g_fixtures = nullptr;
    return 0;
}
