// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/languagehandler.h>

#include <QObject>

namespace replhost::typescript {

// TypeScript as a replhost language: the JavaScript plugin's driver and Node.js probe, with the
// TypeScript compiler loaded once per worker. Each cell is transpiled with the compiler's
// transpileModule, which removes the types without checking them (a cell with type errors runs,
// as with `ts-node --transpile-only`; a syntax error is reported before anything runs), and then
// runs exactly as a JavaScript cell does: top-level declarations persist and may be declared
// again, top-level await works, the completion value is the result. Positions in errors are
// those of the TypeScript, through the compiler's source map.
//
// The compiler is Node's `typescript` module, found by Node's resolution (Debian's node looks in
// /usr/share/nodejs, where node-typescript installs it) or else in Debian's directories, so a
// Node from elsewhere finds Debian's compiler too. TypeScript 4.5 or newer.
//
// Settings (the "typescript" object of the host's language settings):
//   interpreter  the node program, as for JavaScript; else $REPLHOST_NODE, else node on PATH
//   arguments    array of extra node options placed before the driver
//   compiler     absolute path of the typescript package (or its main file) to use instead
class TypeScriptHandler : public QObject, public sdk::LanguageHandler {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID REPLHOST_LANGUAGEHANDLER_IID FILE "typescript.json")
    Q_INTERFACES(replhost::sdk::LanguageHandler)

public:
    // The version reported is the compiler's.
    sdk::RuntimeInfo probe(const QJsonObject &settings) override;
    std::unique_ptr<sdk::Session> createSession(const sdk::RuntimeInfo &runtime,
                                                const sdk::SessionOptions &options) override;

private:
    // The compiler's main file, as the last successful probe() found it; sessions load it.
    QString m_compiler;
};

} // namespace replhost::typescript
