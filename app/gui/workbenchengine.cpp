// SPDX-License-Identifier: Apache-2.0
#include "workbenchengine.h"

#include "httpengine.h"
#include "inprocessengine.h"

#include "core/engine.h"

namespace replhost::gui {

void WorkbenchEngine::open(const core::EngineConfig &config, const QByteArray &tokenOverride,
                           std::function<void(Result<WorkbenchEngine>)> done)
{
    Result<std::unique_ptr<core::Engine>> opened = core::Engine::open(config);
    if (opened) {
        WorkbenchEngine local;
        local.engine = std::move(*opened);
        local.client = std::make_unique<InProcessEngine>(*local.engine);
        done(std::move(local));
        return;
    }
    if (opened.error().code != QLatin1String("locked")) {
        done(opened.error());
        return;
    }
    const QString dataDir = config.resolvedDataDir();
    const Error locked = opened.error();
    const auto cannotAttach = [locked](const Error &why) {
        return Error{why.code, QObject::tr("%1, and the workbench cannot attach to it: %2").arg(locked.message, why.message)};
    };
    Result<ServerEndpoint> endpoint = ServerEndpoint::inDataDir(dataDir, tokenOverride);
    if (!endpoint) {
        done(cannotAttach(endpoint.error()));
        return;
    }
    // Shared with the reply, which owns the client until it hands it over.
    auto client = std::make_shared<std::unique_ptr<HttpEngine>>(std::make_unique<HttpEngine>(*endpoint, dataDir));
    HttpEngine *connecting = client->get();
    connecting->connectToServer([client, done, cannotAttach](Result<void> connected) {
        if (!connected) {
            done(cannotAttach(connected.error()));
            // The client is deleted later: this reply runs inside one of its own signals.
            client->release()->deleteLater();
            return;
        }
        WorkbenchEngine attached;
        attached.client = std::move(*client);
        done(std::move(attached));
    });
}

} // namespace replhost::gui
