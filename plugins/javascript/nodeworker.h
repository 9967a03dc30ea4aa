// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/languagehandler.h>

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <memory>

// Node.js as the runtime of a language plugin: finding it, and starting driver.js in it. The
// JavaScript and TypeScript plugins both compile this unit and embed the same driver, so a
// TypeScript context is a JavaScript context whose cells are transpiled first.
namespace replhost::node {

// What probing found: the runtime (the real node executable and its version), and the lines
// that `extraScript` printed.
struct NodeProbe {
    sdk::RuntimeInfo runtime;
    QStringList extraLines;
};

// Finds Node.js 18 or newer with the inspector: the language's "interpreter" setting, else
// $REPLHOST_NODE, else node (or nodejs) on PATH. `extraScript`, when given, runs in the same
// node process after those checks pass, with `scriptArguments` in process.argv from index 1;
// what it prints to stdout is returned line by line. `language` names the language in messages.
// Blocks for as long as node takes to answer (at most 15 s).
NodeProbe probeNode(const QJsonObject &settings, const QString &language,
                    const QString &extraScript = QString(),
                    const QStringList &scriptArguments = QStringList());

// A session whose worker runs the driver resource `driverResource` (":/replhost/<id>/driver.cjs")
// in the node that `runtime` names, with the settings' "arguments" before the driver and
// `driverArguments` after it. Never null: a session that fails on start() when it cannot.
std::unique_ptr<sdk::Session> createDriverSession(const sdk::RuntimeInfo &runtime,
                                                  const sdk::SessionOptions &options,
                                                  const QString &driverResource,
                                                  const QStringList &driverArguments = QStringList());

} // namespace replhost::node
