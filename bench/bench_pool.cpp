// SPDX-License-Identifier: Apache-2.0
//
// Context creation with the warm pool against a cold start, per language, next to the bare
// runtime start measured in the same run. "Creating a context" is measured as what a client
// waits for: from ContextManager::create() until the context's first trivial run has finished
// (the context can run code):
//   pool_create/<lang>  the engine keeps one pooled worker of the language; before each
//                       iteration (untimed) the pool is waited for until its worker is ready, so
//                       the context takes it and its first run binds it (env delta, cwd)
//   cold_create/<lang>  an engine without a pool: worker start, driver start-up, first run
//   bare_start/<lang>   the bare runtime started and waited for (`python3 -c pass`, `bash -c :`,
//                       `node -e 0`, `perl -e 0`, `java -version`, the Go worker's `--version`)
// Counter create_ms: the mean time of create() itself (row stored, worker handed out or spawned).
// Each context is deleted after its iteration, outside the timed part. After the table, main()
// prints one line per language: the medians, cold/pool, and whether pool creation met the
// < 5 ms target.
//
// Environment: REPLHOST_BENCH_LANGUAGES (comma-separated) limits the languages measured;
// REPLHOST_BENCH_PYTHON is the Python of the engine and of the bare start (default
// /usr/bin/python3).

#include "figurereporter.h"
#include "latencysamples.h"

#include "core/engine.h"
#include "core/execution.h"
#include "core/warmpool.h"

#include <benchmark/benchmark.h>

#include <QCoreApplication>
#include <QEventLoop>
#include <QJsonObject>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

extern char **environ;

namespace {

using namespace replhost;
using namespace replhost::bench;
using Clock = std::chrono::steady_clock;

constexpr int kPoolIterations = 20;
constexpr int kColdIterations = 5;
constexpr int kBareIterations = 10;
constexpr double kTargetMs = 5;
// A pooled JVM is ready within seconds even on a loaded machine.
constexpr int kPoolReadyTimeoutMs = 120000;

struct Language {
    std::string id;
    QString firstRun;                    // the trivial first run
    std::vector<std::string> bareStart;  // program and arguments; [0] looked up on PATH
};

std::string pluginDir() { return REPLHOST_BENCH_PLUGIN_DIR; }

std::vector<Language> languages(const std::string &python)
{
    return {
        {"python", QStringLiteral("x = 0"), {python, "-c", "pass"}},
        {"bash", QStringLiteral("x=0"), {"bash", "-c", ":"}},
        {"javascript", QStringLiteral("let x = 0"), {"node", "-e", "0"}},
        {"perl", QStringLiteral("our $x = 0;"), {"perl", "-e", "0"}},
        {"java", QStringLiteral("int x = 0;"), {"java", "-version"}},
        {"go", QStringLiteral("x := 0"), {pluginDir() + "/replhost-go-worker", "--version"}},
    };
}

bool wanted(const std::string &language)
{
    const char *only = std::getenv("REPLHOST_BENCH_LANGUAGES");
    return !only || !*only
           || QString::fromLatin1(only).split(QLatin1Char(',')).contains(
               QString::fromStdString(language));
}

// Two engines in this process, each on its own data directory: one with a pool of one worker
// for every measured language, one without a pool.
struct Engines {
    QTemporaryDir pooledDir, coldDir;
    std::unique_ptr<core::Engine> pooled, cold;
    std::vector<Language> languages;
    std::string python;
};
Engines *g_engines = nullptr;

std::optional<std::string> openEngine(std::unique_ptr<core::Engine> &engine, const QString &dir,
                                      int poolSize)
{
    core::EngineConfig config;
    config.dataDir = dir;
    config.pluginPaths = {QString::fromStdString(pluginDir())};
    config.languageSettings = QJsonObject{
        {QStringLiteral("python"),
         QJsonObject{{QStringLiteral("interpreter"), QString::fromStdString(g_engines->python)}}}};
    config.warmPoolSize = 0;
    for (const Language &language : g_engines->languages) {
        if (wanted(language.id))
            config.warmPoolSizes.insert(QString::fromStdString(language.id), poolSize);
    }
    auto opened = core::Engine::open(config);
    if (!opened)
        return opened.error().message.toStdString();
    engine = std::move(*opened);
    return std::nullopt;
}

// Runs the engine's event loop until `done` holds for its pool (false on timeout).
bool waitForPool(core::Engine &engine,
                 const std::function<bool(const core::WarmPool::LanguageState &)> &done,
                 const QString &language)
{
    const core::WarmPool &pool = engine.contexts().warmPool();
    auto reached = [&] { return done(pool.state().value(language)); };
    QEventLoop loop;
    QObject::connect(&pool, &core::WarmPool::changed, &loop, [&] {
        if (reached())
            loop.quit();
    });
    QTimer::singleShot(kPoolReadyTimeoutMs, &loop, &QEventLoop::quit);
    if (!reached())
        loop.exec();
    return reached();
}

// No pooled worker of the pooled engine is starting: a refill left over from an earlier case
// would compete with this one for the CPUs.
bool waitForQuietPools()
{
    for (const Language &language : g_engines->languages) {
        if (wanted(language.id)
            && !waitForPool(*g_engines->pooled,
                            [](const core::WarmPool::LanguageState &s) { return s.starting == 0; },
                            QString::fromStdString(language.id)))
            return false;
    }
    return true;
}

// One context created and its first run finished; the time it took, or what went wrong. The
// context is deleted afterwards, untimed.
std::optional<std::string> createAndRunOnce(core::Engine &engine, const Language &language,
                                            Clock::duration *elapsed, Clock::duration *creating)
{
    core::ContextManager &contexts = engine.contexts();
    const auto start = Clock::now();
    core::CreateContextRequest create;
    create.language = QString::fromStdString(language.id);
    auto created = contexts.create(create);
    *creating = Clock::now() - start;
    if (!created)
        return created.error().message.toStdString();
    core::RunRequest request;
    request.contextId = created->id;
    request.code = language.firstRun;
    auto started = contexts.run(request);
    if (!started)
        return started.error().message.toStdString();
    const core::ExecutionPtr execution = *started;
    if (!execution->isFinished()) {
        QEventLoop loop;
        QObject::connect(execution.get(), &core::Execution::finished, &loop, &QEventLoop::quit);
        loop.exec();
    }
    *elapsed = Clock::now() - start;
    if (execution->status() != QLatin1String("ok"))
        return "the first run ended " + execution->status().toStdString();
    if (auto removed = contexts.remove({}, created->id); !removed)
        return removed.error().message.toStdString();
    return std::nullopt;
}

void contextCreation(benchmark::State &state, const Language &language, bool pooled)
{
    core::Engine &engine = pooled ? *g_engines->pooled : *g_engines->cold;
    const QString id = QString::fromStdString(language.id);
    if (!engine.plugins().resolve(id)) {
        state.SkipWithError(engine.plugins().resolve(id).error().message.toStdString().c_str());
        return;
    }
    if (!waitForQuietPools()) {
        state.SkipWithError("a pooled worker did not finish starting");
        return;
    }
    LatencySamples samples(state.max_iterations);
    double createSeconds = 0;
    for (auto _ : state) {
        if (pooled && !waitForPool(engine, [](const auto &s) { return s.ready > 0; }, id)) {
            state.SkipWithError("the pool did not fill");
            return;
        }
        Clock::duration elapsed{}, creating{};
        if (auto error = createAndRunOnce(engine, language, &elapsed, &creating)) {
            state.SkipWithError(error->c_str());
            return;
        }
        createSeconds += std::chrono::duration<double>(creating).count();
        state.SetIterationTime(std::chrono::duration<double>(elapsed).count());
        samples.add(elapsed);
    }
    const core::WarmPool::LanguageState pool = engine.contexts().warmPool().state().value(id);
    // The share of ContextManager::create() itself (the stored row, the hand-out or spawn).
    state.counters["create_ms"] = createSeconds * 1000 / double(state.iterations());
    state.counters["pool_hits"] = double(pool.hits);
    state.counters["pool_misses"] = double(pool.misses);
    samples.report(state);
}

// The bare runtime, spawned with its output to /dev/null and waited for.
void bareStart(benchmark::State &state, const Language &language)
{
    std::vector<std::string> argv = language.bareStart;
    if (argv[0].find('/') == std::string::npos)
        argv[0] = QStandardPaths::findExecutable(QString::fromStdString(argv[0])).toStdString();
    if (argv[0].empty()) {
        state.SkipWithError((language.bareStart[0] + " not found on PATH").c_str());
        return;
    }
    if (!waitForQuietPools()) {
        state.SkipWithError("a pooled worker did not finish starting");
        return;
    }
    std::vector<char *> args;
    for (std::string &arg : argv)
        args.push_back(arg.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    for (int fd = 0; fd <= 2; ++fd)
        posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0);
    LatencySamples samples(state.max_iterations);
    for (auto _ : state) {
        const auto start = Clock::now();
        pid_t pid = 0;
        int status = 0;
        const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
        if (spawned != 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)
            || WEXITSTATUS(status) != 0) {
            state.SkipWithError((argv[0] + " did not start and exit 0").c_str());
            break;
        }
        const auto elapsed = Clock::now() - start;
        state.SetIterationTime(std::chrono::duration<double>(elapsed).count());
        samples.add(elapsed);
    }
    posix_spawn_file_actions_destroy(&actions);
    samples.report(state);
}

void summarise(const FigureReporter &reporter)
{
    std::printf("\n%-11s %12s %12s %12s %9s %9s  %s\n", "language", "pool p50", "cold p50",
                "bare p50", "cold/pool", "cold/bare", "pool < 5 ms");
    for (const Language &language : g_engines->languages) {
        if (!wanted(language.id))
            continue;
        const auto *pool = reporter.figure("pool_create/" + language.id);
        const auto *cold = reporter.figure("cold_create/" + language.id);
        const auto *bare = reporter.figure("bare_start/" + language.id);
        auto ms = [](const FigureReporter::Figure *f) { return f ? f->p50Us / 1000 : 0.0; };
        auto ratio = [&](const FigureReporter::Figure *a, const FigureReporter::Figure *b) {
            return a && b && b->p50Us > 0 ? a->p50Us / b->p50Us : 0.0;
        };
        std::printf("%-11s %9.2f ms %9.1f ms %9.1f ms %8.0fx %8.1fx  %s\n", language.id.c_str(),
                    ms(pool), ms(cold), ms(bare), ratio(cold, pool), ratio(cold, bare),
                    !pool ? "not measured" : ms(pool) < kTargetMs ? "met" : "NOT met");
    }
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    benchmark::Initialize(&argc, argv);
    Engines engines;
    g_engines = &engines;
    const char *python = std::getenv("REPLHOST_BENCH_PYTHON");
    engines.python = python && *python ? python : "/usr/bin/python3";
    engines.languages = languages(engines.python);
    for (auto [engine, dir, size] : {std::tuple{&engines.pooled, &engines.pooledDir, 1},
                                     std::tuple{&engines.cold, &engines.coldDir, 0}}) {
        if (auto error = openEngine(*engine, dir->path(), size)) {
            std::fprintf(stderr, "cannot open the engine: %s\n", error->c_str());
            return 1;
        }
    }

    for (const Language &language : engines.languages) {
        if (!wanted(language.id))
            continue;
        benchmark::RegisterBenchmark(("pool_create/" + language.id).c_str(), contextCreation,
                                     language, true)
            ->Iterations(kPoolIterations)->UseManualTime()->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("cold_create/" + language.id).c_str(), contextCreation,
                                     language, false)
            ->Iterations(kColdIterations)->UseManualTime()->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("bare_start/" + language.id).c_str(), bareStart, language)
            ->Iterations(kBareIterations)->UseManualTime()->Unit(benchmark::kMillisecond);
    }
    FigureReporter::runAndSummarise(summarise);
    engines.pooled.reset();
    engines.cold.reset();
    g_engines = nullptr;
    return 0;
}
