// SPDX-License-Identifier: Apache-2.0
#include "warmenginecontext.h"

#include "latencysamples.h"
#include "schedmeter.h"

#include "core/execution.h"

#include <QEventLoop>
#include <QJsonObject>
#include <QTimer>

#include <chrono>

namespace replhost::bench {

std::optional<std::string> WarmEngineContext::open(const QString &dataDir, const QString &pluginDir,
                                                   const QString &interpreter)
{
    core::EngineConfig config;
    config.dataDir = dataDir;
    config.pluginPaths = {pluginDir};
    config.warmPoolSize = 0;  // worker starts are measured cold here; bench_pool measures the pool
    config.languageSettings = QJsonObject{
            {QStringLiteral("python"), QJsonObject{{QStringLiteral("interpreter"), interpreter}}}};
    auto opened = core::Engine::open(config);
    if (!opened) {
        m_error = opened.error().message.toStdString();
        return m_error;
    }
    m_engine = std::move(*opened);
    return std::nullopt;
}

std::optional<std::string> WarmEngineContext::run(const QString &code, int timeoutMs)
{
    if (!m_engine)
        return m_error;
    core::RunRequest request;
    request.contextId = m_context;
    request.code = code;
    auto started = m_engine->contexts().run(request);
    if (!started)
        return started.error().message.toStdString();
    const core::ExecutionPtr execution = *started;
    if (!execution->isFinished()) {
        QEventLoop loop;
        QTimer timer;
        timer.setSingleShot(true);
        QObject::connect(&timer, &QTimer::timeout, &loop, &QEventLoop::quit);
        QObject::connect(execution.get(), &core::Execution::finished, &loop, &QEventLoop::quit);
        timer.start(timeoutMs);
        loop.exec();
    }
    if (!execution->isFinished())
        return "no Done event within " + std::to_string(timeoutMs) + " ms";
    if (execution->status() != QLatin1String("ok"))
        return "execution ended with status " + execution->status().toStdString();
    return std::nullopt;
}

std::optional<std::string> WarmEngineContext::ensureStarted()
{
    if (!m_engine)
        return m_error;
    if (!m_context.isEmpty())
        return std::nullopt;
    core::CreateContextRequest create;
    create.language = m_language;
    auto created = m_engine->contexts().create(create);
    if (!created)
        return created.error().message.toStdString();
    m_context = created->id;
    if (auto error = run(m_firstRun))  // the first run waits for the worker's start
        return error;
    auto info = m_engine->contexts().get(core::WorkspaceManager::defaultName(), m_context);
    if (!info || info->pid <= 0)
        return std::string("the context reports no worker pid");
    m_worker = pid_t(info->pid);
    return std::nullopt;
}

void WarmEngineContext::measure(benchmark::State &state, const QString &code, int warmups)
{
    for (int i = 0; i < warmups; ++i) {
        if (auto error = run(code)) {
            state.SkipWithError(error->c_str());
            return;
        }
    }
    core::RunRequest request;
    request.contextId = m_context;
    request.code = code;
    core::ContextManager &contexts = m_engine->contexts();
    QEventLoop loop;
    LatencySamples samples(state.max_iterations);
    int failed = 0;
    SchedMeter sched({{"worker", m_worker}});
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        auto started = contexts.run(request);
        if (!started) {
            state.SkipWithError(started.error().message.toStdString().c_str());
            break;
        }
        // The loop turns until the execution has finished, as a server's loop would have run
        // on: leaving a nested loop with quit() is a wake-up of the loop (an eventfd write, a
        // poll and a read, and one more pass) that is this program's, not the engine's.
        const core::ExecutionPtr &execution = *started;
        while (!execution->isFinished())
            loop.processEvents(QEventLoop::WaitForMoreEvents);
        samples.add(std::chrono::steady_clock::now() - start);
        if (execution->status() != QLatin1String("ok"))
            ++failed;
    }
    sched.report(state);
    if (failed)
        state.SkipWithError((std::to_string(failed) + " executions did not end \"ok\"").c_str());
    samples.report(state);
}

} // namespace replhost::bench
