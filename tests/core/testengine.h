// SPDX-License-Identifier: Apache-2.0
#pragma once
// An Engine on a temporary data directory with the build tree's plugins, for the engine suites:
// made in init(), reopened with another config when a test needs one, gone in cleanup(); and
// the ways of those suites to make a context and run code in it.

#include "core/engine.h"
#include "executionevents.h"

#include <QTemporaryDir>
#include <QtGlobal>

#include <memory>

namespace replhost::core::testing {

class TestEngine {
public:
    // The config of an engine on this data directory with the plugins of `pluginDir`.
    EngineConfig config(const QString &pluginDir) const
    {
        EngineConfig config;
        config.dataDir = m_dataDir->path();
        config.pluginPaths = {pluginDir};
        return config;
    }

    // A new data directory; false when it cannot be made.
    bool makeDataDir()
    {
        m_engine.reset();
        m_dataDir = std::make_unique<QTemporaryDir>();
        return m_dataDir->isValid();
    }

    // (Re)opens the engine on the data directory; a warning says why when it cannot.
    bool open(const EngineConfig &config)
    {
        m_engine.reset();
        auto engine = Engine::open(config);
        if (!engine) {
            qWarning("cannot open the engine: %s: %s", qPrintable(engine.error().code),
                     qPrintable(engine.error().message));
            return false;
        }
        m_engine = std::move(*engine);
        return true;
    }

    // The engine alone: its data directory stays for a later open().
    void close() { m_engine.reset(); }

    // The engine first, so its workers are gone before their directory.
    void reset()
    {
        m_engine.reset();
        m_dataDir.reset();
    }

    Engine *operator->() const { return m_engine.get(); }
    ContextManager &contexts() const { return m_engine->contexts(); }

    // A new context as `request` asks; empty, and a warning naming why, when it is refused.
    QString createContext(const CreateContextRequest &request) const
    {
        auto created = contexts().create(request);
        if (!created) {
            qWarning("cannot create a %s context: %s: %s", qPrintable(request.language),
                     qPrintable(created.error().code), qPrintable(created.error().message));
            return {};
        }
        return created->id;
    }

    // What the engine says of a context; an empty ContextInfo when it knows none by that id.
    ContextInfo info(const QString &contextId, const QString &workspace = {}) const
    {
        auto found = contexts().get(workspace, contextId);
        return found ? *found : ContextInfo{};
    }

    // Submits `code` to the context (the rest of the run as `request` says) without waiting;
    // null, and a warning naming why, when it is refused.
    ExecutionPtr start(const QString &contextId, const QString &code, RunRequest request = {}) const
    {
        request.contextId = contextId;
        request.code = code;
        return startRun(contexts(), request);
    }

    // The same, once it has ended; null, and a warning with its events, when it has not ended
    // within `timeoutMs`.
    ExecutionPtr run(const QString &contextId, const QString &code, int timeoutMs,
                     RunRequest request = {}) const
    {
        return waitForEnd(start(contextId, code, std::move(request)), timeoutMs);
    }
    QString dataDir() const { return m_dataDir->path(); }

private:
    std::unique_ptr<QTemporaryDir> m_dataDir;
    std::unique_ptr<Engine> m_engine;
};

} // namespace replhost::core::testing
