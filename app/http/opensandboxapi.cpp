// SPDX-License-Identifier: Apache-2.0
#include "opensandboxapi.h"

#include "opensandboxexecdapi.h"
#include "opensandboxfilesapi.h"
#include "opensandboxlifecycleapi.h"
#include "securitygate.h"

#include <algorithm>

namespace replhost::http {

OpenSandboxApi::OpenSandboxApi(core::Engine &engine, QByteArray token, int streamKeepAliveMs,
                               StreamLimiter &streams)
    : m_lifecycle(std::make_unique<OpenSandboxLifecycleApi>(engine, std::move(token))),
      m_execd(std::make_unique<OpenSandboxExecdApi>(
              engine, std::clamp(streamKeepAliveMs, 1, kMaxPingIntervalMs), streams)),
      m_files(std::make_unique<OpenSandboxFilesApi>(engine))
{
}

OpenSandboxApi::~OpenSandboxApi() = default;

void OpenSandboxApi::registerRoutes(Router &router, SecurityGate &gate)
{
    for (const QByteArray &header : {OpenSandboxLifecycleApi::apiKeyHeader(),
                                     OpenSandboxLifecycleApi::execdTokenHeader()}) {
        gate.acceptTokenHeader(OpenSandboxLifecycleApi::prefix(), header);
    }
    m_lifecycle->registerRoutes(router);
    m_execd->registerRoutes(router);
    m_files->registerRoutes(router);
}

} // namespace replhost::http
