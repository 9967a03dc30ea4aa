// SPDX-License-Identifier: Apache-2.0
#include "javascripthandler.h"

#include "nodeworker.h"

namespace replhost::javascript {

sdk::RuntimeInfo JavaScriptHandler::probe(const QJsonObject &settings)
{
    return node::probeNode(settings, QStringLiteral("javascript")).runtime;
}

std::unique_ptr<sdk::Session> JavaScriptHandler::createSession(const sdk::RuntimeInfo &runtime,
                                                               const sdk::SessionOptions &options)
{
    return node::createDriverSession(runtime, options,
                                     QStringLiteral(":/replhost/javascript/driver.cjs"));
}

} // namespace replhost::javascript
