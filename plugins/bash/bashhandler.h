// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/languagehandler.h>

#include <QObject>

namespace replhost::bash {

// GNU bash (5.0 or newer) as a replhost language: driver.bash, embedded as a resource, turns one
// interactive bash per context into a worker, so variables, functions, aliases, exports, options
// and the working directory persist from one execution to the next.
//
// Settings (the "bash" object of the host's language settings):
//   interpreter  program to use, a path or a name looked up on PATH; else $REPLHOST_BASH,
//                else bash on PATH
class BashHandler : public QObject, public sdk::LanguageHandler {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID REPLHOST_LANGUAGEHANDLER_IID FILE "bash.json")
    Q_INTERFACES(replhost::sdk::LanguageHandler)

public:
    sdk::RuntimeInfo probe(const QJsonObject &settings) override;
    std::unique_ptr<sdk::Session> createSession(const sdk::RuntimeInfo &runtime,
                                                const sdk::SessionOptions &options) override;
};

} // namespace replhost::bash
