// SPDX-License-Identifier: Apache-2.0
#pragma once
// An Engine on a temporary data directory with the build tree's plugins, for the engine suites:
// made in init(), reopened with another config when a test needs one, gone in cleanup().

#include "core/engine.h"

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
    QString dataDir() const { return m_dataDir->path(); }

private:
    std::unique_ptr<QTemporaryDir> m_dataDir;
    std::unique_ptr<Engine> m_engine;
};

} // namespace replhost::core::testing
