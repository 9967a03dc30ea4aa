// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/languagehandler.h>

#include <QObject>

namespace replhost::go {

// Go as a replhost language, interpreted by yaegi. Each context is one replhost-go-worker
// process: a Go program built with this plugin (worker/), which embeds the interpreter and
// speaks the worker protocol. It is installed beside the plugin's file; a build without a Go
// toolchain or without yaegi's sources has no worker, and probe() then says what to install.
// See README.md for what users get and the limits of the interpreter.
//
// Settings (the "go" object of the host's language settings):
//   interpreter  the worker program to use, a path or a name looked up on PATH; else
//                $REPLHOST_GO, else the worker beside this plugin
//   gopath       the directory whose src/ `import` finds packages given as Go source in
//                (one directory: yaegi takes no list); default: $GOPATH, else
//                /usr/share/gocode (Debian's golang-*-dev packages) when it exists, else ~/go
class GoHandler : public QObject, public sdk::LanguageHandler {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID REPLHOST_LANGUAGEHANDLER_IID FILE "go.json")
    Q_INTERFACES(replhost::sdk::LanguageHandler)

public:
    sdk::RuntimeInfo probe(const QJsonObject &settings) override;
    std::unique_ptr<sdk::Session> createSession(const sdk::RuntimeInfo &runtime,
                                                const sdk::SessionOptions &options) override;
};

} // namespace replhost::go
