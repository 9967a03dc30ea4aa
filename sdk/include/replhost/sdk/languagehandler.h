// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "replhost/sdk/session.h"
#include "replhost/sdk/version.h"

#include <QJsonObject>
#include <QString>
#include <QtPlugin>

#include <memory>

namespace replhost::sdk {

// What probe() found out about a language runtime on this machine.
struct RuntimeInfo {
    bool available = false;
    QString version;     // e.g. "3.11.2"
    QString executable;  // the resolved program that sessions will start
    QString reason;      // when unavailable: what is missing and what to install or set
};

// A language plugin. One instance per plugin, created by the host's plugin loader.
//
// Metadata: every plugin embeds a JSON object with Q_PLUGIN_METADATA(IID
// REPLHOST_LANGUAGEHANDLER_IID FILE "<language>.json"). The host reads and validates it before
// loading the plugin's code. Fields:
//   id           (string, required)   stable language id, lowercase: "python"
//   name         (string, required)   display name: "Python"
//   version      (string, required)   the plugin's own version
//   sdkVersion   (string, required)   "MAJOR.MINOR" of the SDK it was built against
//   aliases      (array of strings)   other names accepted by the API: ["py", "python3"]
//   extensions   (array of strings)   file extensions, with the dot: [".py"]
//   lexer        (string)             editor lexer hint: "python", "bash", "cpp", ...
//   capabilities (object)             interrupt, complete, variables, display MIME types
//
// Threading: all methods are called from the host's engine thread.
class LanguageHandler {
public:
    virtual ~LanguageHandler() = default;

    // Checks whether the runtime can be used, resolving the executable to start. May block
    // briefly (it may run the runtime once); the host calls it once at start-up and when asked
    // to re-check. `settings` is the per-language configuration (for example "interpreter").
    virtual RuntimeInfo probe(const QJsonObject &settings) = 0;

    // Creates a session that is not started yet. `runtime` is the result of the last successful
    // probe. Ownership passes to the caller. Never returns null: a handler that cannot create a
    // session returns one that fails on start() with the reason.
    virtual std::unique_ptr<Session> createSession(const RuntimeInfo &runtime,
                                                   const SessionOptions &options) = 0;
};

} // namespace replhost::sdk

Q_DECLARE_INTERFACE(replhost::sdk::LanguageHandler, REPLHOST_LANGUAGEHANDLER_IID)
