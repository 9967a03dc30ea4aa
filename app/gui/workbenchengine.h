// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "engineclient.h"

#include "core/engineconfig.h"

#include <functional>
#include <memory>

namespace replhost::gui {

// The engine a workbench works on: its own, opened on the data directory, or, when a running
// replhost-server (or another workbench serving its API) holds the directory, that process's,
// reached through the API it serves (HttpEngine). `engine` is null when attached.
struct WorkbenchEngine {
    std::unique_ptr<core::Engine> engine;
    std::unique_ptr<EngineClient> client;

    // Opens the engine of `config`'s data directory, or attaches to the process that holds it;
    // `done` is called once, at once for an engine opened here, later for an attached one (its
    // plugins, workspaces and contexts read). `tokenOverride` is the token to present instead
    // of the data directory's. An error says why neither worked: for a directory held by a
    // process that serves no API, the lock's message and why attaching failed.
    static void open(const core::EngineConfig &config, const QByteArray &tokenOverride,
                     std::function<void(Result<WorkbenchEngine>)> done);
};

} // namespace replhost::gui
