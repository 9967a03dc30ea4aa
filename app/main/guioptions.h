// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QString>
#include <QStringList>

#include <optional>

namespace replhost::app {

// The command line of the replhost workbench, parsed and checked.
struct GuiOptions {
    enum class Action { Run, ShowHelp, ShowVersion, Fail };

    Action action = Action::Run;
    QString error;        // for Fail: what is wrong, for people
    QString helpText;     // for ShowHelp

    QString dataDir;      // empty: REPLHOST_DATA_DIR, else the XDG default
    QStringList pluginPaths;
    // --serve [port]: start the HTTP server at once (on the saved port when none is given).
    bool serve = false;
    std::optional<quint16> servePort;

    // `arguments` includes the program name, as QCoreApplication::arguments().
    static GuiOptions parse(const QStringList &arguments);
};

} // namespace replhost::app
