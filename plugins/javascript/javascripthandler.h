// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/languagehandler.h>

#include <QObject>

namespace replhost::javascript {

// Node.js (18 or newer) as a replhost language: driver.js, embedded as a resource, runs in a
// worker process started from the node executable that probe() resolved. Cells are evaluated
// in V8's REPL mode through Node's in-process inspector, as in a browser console: top-level
// declarations persist and may be declared again, top-level await works, and the completion
// value of a cell is its result.
//
// Settings (the "javascript" object of the host's language settings):
//   interpreter  program to use, a path or a name looked up on PATH; else $REPLHOST_NODE,
//                else node (or nodejs) on PATH
//   arguments    array of extra node options placed before the driver, for example
//                ["--max-old-space-size=4096"]
class JavaScriptHandler : public QObject, public sdk::LanguageHandler {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID REPLHOST_LANGUAGEHANDLER_IID FILE "javascript.json")
    Q_INTERFACES(replhost::sdk::LanguageHandler)

public:
    sdk::RuntimeInfo probe(const QJsonObject &settings) override;
    std::unique_ptr<sdk::Session> createSession(const sdk::RuntimeInfo &runtime,
                                                const sdk::SessionOptions &options) override;
};

} // namespace replhost::javascript
