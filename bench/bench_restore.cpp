// SPDX-License-Identifier: Apache-2.0
//
// Restore time of a dormant context, per language and per length of history: a context that ran
// N trivial executions is made dormant (ContextManager::evict), then one trivial run restores it.
// One iteration is that run, from ContextManager::run() until its Execution is finished: a fresh
// worker starts, the N executions are replayed, the run's own code runs. The context also ran
// the trivial code once before its history (to be idle, hence evictable), and that run is
// replayed too, so a row replays N + 1. N = 0 is close to the cost of starting a worker alone,
// so the difference between rows is the replay.
//
// Two engines: one as shipped, where Bash and Python restore from a snapshot (Bash's taken after
// every run, Python's when the context is evicted), and one with snapshots turned off
// (snapshot_max_bytes 0), where every language replays. Rows `restore/<language>/replayed:N`
// come from the second, `restore/<language>/snapshot:N` from the first, beside them at the same
// N: a snapshot restore should not grow with N, a replay does.
//
// Counters per iteration: `restore_ms`, the duration the run's "restored" event reports (worker
// start and restore); `run_ms`, the whole run, wall clock (also the Time column); `replayed`,
// the executions the restore ran again (0 for a snapshot).
//
// Environment: REPLHOST_BENCH_LANGUAGES, a comma-separated subset of python,bash,perl,
// javascript,java (default: all of them).

#include "core/engine.h"
#include "core/execution.h"

#include <benchmark/benchmark.h>

#include <QCoreApplication>
#include <QEventLoop>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QThread>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include <signal.h>

namespace {

using namespace replhost;
using Clock = std::chrono::steady_clock;

struct Language {
    const char *id;
    const char *defineFormat;  // %1: a number; defines a variable named after it
    const char *probe;         // a trivial run
    int iterations;
    bool snapshots;            // restores from a snapshot as shipped
};

constexpr Language kLanguages[] = {
    {"python", "x%1 = %1", "0", 10, true},
    {"bash", "x%1=%1", ":", 10, true},
    {"perl", "our $x%1 = %1;", "0;", 10, false},
    {"javascript", "var x%1 = %1", "0", 10, false},
    {"java", "int x%1 = %1;", "0", 3, false},
};

constexpr int kHistoryLengths[] = {0, 10, 100};
constexpr int kSnapshotHistoryLengths[] = {10, 100, 1000};

// One engine per way of restoring, each on a temporary data directory of its own.
struct Bench {
    QTemporaryDir snapshotDir;
    QTemporaryDir replayDir;
    std::unique_ptr<core::Engine> snapshotEngine;
    std::unique_ptr<core::Engine> replayEngine;
    core::Engine *engine = nullptr;  // the one the running row uses
};

Bench &bench()
{
    static Bench instance;
    return instance;
}

// Runs `code` and waits for its end; nullptr when it was refused.
core::ExecutionPtr runAndWait(const QString &contextId, const QString &code)
{
    core::RunRequest request;
    request.contextId = contextId;
    request.code = code;
    auto started = bench().engine->contexts().run(request);
    if (!started)
        return nullptr;
    core::ExecutionPtr execution = *started;
    if (!execution->isFinished()) {
        QEventLoop loop;
        QObject::connect(execution.get(), &core::Execution::finished, &loop, &QEventLoop::quit);
        loop.exec();
    }
    return execution;
}

// Evicts the context and waits until its old worker is gone, so the next restore does not share
// the CPUs with a worker shutting down.
bool evictAndSettle(const QString &contextId)
{
    const qint64 pid = bench().engine->contexts().get({}, contextId)->pid;
    if (!bench().engine->contexts().evict({}, contextId))
        return false;
    while (pid > 0 && ::kill(pid_t(pid), 0) == 0) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
        QThread::usleep(200);
    }
    return true;
}

void restoreDormantContext(benchmark::State &state, const Language &language, int history,
                           core::Engine *engine)
{
    bench().engine = engine;
    core::CreateContextRequest create;
    create.language = QString::fromLatin1(language.id);
    auto context = bench().engine->contexts().create(create);
    if (!context) {
        state.SkipWithError(qPrintable(context.error().message));
        return;
    }
    const QString id = context->id;
    // Waits for the worker too: a context whose worker is still starting cannot be evicted.
    if (const core::ExecutionPtr warm = runAndWait(id, QString::fromLatin1(language.probe));
        !warm || warm->status() != QLatin1String("ok")) {
        state.SkipWithError("the first run failed");
        return;
    }
    for (int i = 0; i < history; ++i) {
        const core::ExecutionPtr run =
            runAndWait(id, QString::fromLatin1(language.defineFormat).arg(i));
        if (!run || run->status() != QLatin1String("ok")) {
            state.SkipWithError("a history run failed");
            return;
        }
    }

    double restoreMs = 0;
    double runMs = 0;
    double replayed = 0;
    for (auto _ : state) {
        state.PauseTiming();
        if (!evictAndSettle(id)) {
            state.SkipWithError("cannot evict the context");
            break;
        }
        state.ResumeTiming();
        const Clock::time_point begin = Clock::now();
        const core::ExecutionPtr run = runAndWait(id, QString::fromLatin1(language.probe));
        const Clock::time_point end = Clock::now();
        if (!run || run->status() != QLatin1String("ok")) {
            state.SkipWithError("the restoring run failed");
            break;
        }
        runMs += std::chrono::duration<double, std::milli>(end - begin).count();
        for (const sdk::Event &event : run->events()) {
            if (event.type == QLatin1String("restored")) {
                restoreMs += event.fields.value(QLatin1String("duration_ms")).toDouble();
                replayed += event.fields.value(QLatin1String("replayed")).toDouble();
            }
        }
    }
    const double n = double(state.iterations());
    state.counters["restore_ms"] = n > 0 ? restoreMs / n : 0;
    state.counters["run_ms"] = n > 0 ? runMs / n : 0;
    state.counters["replayed"] = n > 0 ? replayed / n : 0;
    (void)bench().engine->contexts().remove({}, id);
}

bool wanted(const char *language)
{
    const QString only = qEnvironmentVariable("REPLHOST_BENCH_LANGUAGES");
    return only.isEmpty() || only.split(QLatin1Char(',')).contains(QLatin1String(language));
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    benchmark::Initialize(&argc, argv);

    for (const bool snapshots : {true, false}) {
        core::EngineConfig config;
        config.dataDir = snapshots ? bench().snapshotDir.path() : bench().replayDir.path();
        config.pluginPaths = {QStringLiteral(REPLHOST_BENCH_PLUGIN_DIR)};
        config.warmPoolSize = 0;  // worker starts are measured cold here; bench_pool measures the pool
        // Every iteration adds a run to the history, and past the default replay bounds (1000
        // executions, 300 s) a restore starts afresh instead of replaying: off, so that a
        // replayed row measures a replay of its N.
        config.workspaceDefaults.restore.maxReplayCells = 0;
        config.workspaceDefaults.restore.maxReplaySeconds = 0;
        if (!snapshots) {
            for (const Language &language : kLanguages)
                config.languageSettings.insert(
                    QString::fromLatin1(language.id),
                    QJsonObject{{QStringLiteral("snapshot_max_bytes"), 0}});
        }
        auto engine = core::Engine::open(config);
        if (!engine) {
            std::fprintf(stderr, "cannot open the engine: %s\n", qPrintable(engine.error().message));
            return 1;
        }
        (snapshots ? bench().snapshotEngine : bench().replayEngine) = std::move(*engine);
    }

    for (const Language &language : kLanguages) {
        if (!wanted(language.id))
            continue;
        if (auto plugin = bench().replayEngine->plugins().resolve(QString::fromLatin1(language.id));
            !plugin) {
            std::fprintf(stderr, "skipping %s: %s\n", language.id,
                         qPrintable(plugin.error().message));
            continue;
        }
        const auto add = [&language](const char *mode, int history, core::Engine *engine) {
            const std::string name = std::string("restore/") + language.id + "/" + mode + ":"
                                     + std::to_string(history);
            benchmark::RegisterBenchmark(name.c_str(), [&language, history, engine](benchmark::State &s) {
                restoreDormantContext(s, language, history, engine);
            })
                ->Iterations(language.iterations)
                ->Unit(benchmark::kMillisecond)
                ->UseRealTime();
        };
        if (language.snapshots) {
            for (int history : kSnapshotHistoryLengths) {
                add("replayed", history, bench().replayEngine.get());
                add("snapshot", history, bench().snapshotEngine.get());
            }
        } else {
            for (int history : kHistoryLengths)
                add("replayed", history, bench().replayEngine.get());
        }
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    bench().snapshotEngine.reset();
    bench().replayEngine.reset();
    return 0;
}
