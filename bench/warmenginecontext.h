// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/engine.h"

#include <benchmark/benchmark.h>

#include <QString>

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

namespace replhost::bench {

// A warm Python context of an engine opened in the benchmark's own process: the in-process
// round trip, ContextManager::run() until the Execution emits finished, that the other figures
// of a benchmark are compared with. Real plugin, real worker, history persisted.
//
// Errors: a message, as the benchmarks report them. Threading: the thread that owns the
// QCoreApplication (the engine runs in its event loop).
class WarmEngineContext {
public:
    // Opens the engine in `dataDir`, with the plugins of `pluginDir` searched first and the
    // Python plugin set to `interpreter`.
    std::optional<std::string> open(const QString &dataDir, const QString &pluginDir,
                                    const QString &interpreter);
    // Stops the context's worker and closes the engine.
    void close() { m_engine.reset(); }

    core::Engine *engine() const { return m_engine.get(); }

    // The language of the context and its first run, which waits for the worker to start
    // (default: Python, "x = 0"). Takes effect at the next ensureStarted() that creates it.
    void setLanguage(const QString &language, const QString &firstRun)
    {
        m_language = language;
        m_firstRun = firstRun;
    }

    // Creates the context on the first call and waits until its interpreter has run once.
    std::optional<std::string> ensureStarted();
    pid_t workerPid() const { return m_worker; }

    // One run that must end "ok" within `timeoutMs`.
    std::optional<std::string> run(const QString &code, int timeoutMs = 60000);

    // `warmups` checked runs, then the timed loop: per iteration one run of `code`, waited for
    // without a timeout timer (arming one would be part of what is measured). Reports the
    // latency percentiles and the scheduler counters of the host and the worker.
    void measure(benchmark::State &state, const QString &code, int warmups);

private:
    std::unique_ptr<core::Engine> m_engine;
    std::string m_error = "the engine is not open";
    QString m_context;
    QString m_language = QStringLiteral("python");
    QString m_firstRun = QStringLiteral("x = 0");
    pid_t m_worker = 0;
};

} // namespace replhost::bench
