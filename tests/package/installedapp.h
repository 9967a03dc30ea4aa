// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "commandrun.h"

class ServerProcess;

#include <QMap>
#include <QString>
#include <QStringList>

#include <sys/types.h>

#include <utility>

// Checks that the packaging tests make of an installed replhost (a `cmake --install` tree, an
// unpacked or a dpkg-installed package), given the directory that holds its bin/. Each returns
// an empty string on success, else what went wrong. Threading: the test thread.
class InstalledApp {
public:
    explicit InstalledApp(QString prefix) : m_prefix(std::move(prefix)) {}

    // `cmake --install` of this build tree (every component) into `prefix`.
    static CommandRun installBuildTree(const QString &prefix);

    QString binary(const QString &name) const;

    // The environment under which only the tree's own plugins are found: no
    // REPLHOST_PLUGIN_PATH, a home directory `scratchDir`/home (created by whoever installs
    // into it) and user plugin directories inside the scratch directory. The system's
    // directories (/usr/local/lib/replhost/plugins, /usr/lib/<triplet>/replhost/plugins) are
    // searched as always: a machine with replhost plugins installed there gives them too.
    QMap<QString, QString> isolatedEnvironment(const QString &scratchDir) const;

    // `replhost-server --version` names the application and SDK versions.
    QString checkServerVersion() const;
    // Starts the tree's replhost-server, runs Python and Bash code over HTTP in contexts that
    // keep their state, and checks that every loaded plugin came from the tree itself.
    QString checkServerRunsPythonAndBash(const QString &scratchDir) const;
    // `replhost --help` on the offscreen platform.
    QString checkWorkbenchHelp() const;
    // The installed systemd user unit (lib/systemd/user/replhost-server.service), whose
    // ExecStart names the server under `unitPrefix` (where the tree was installed to; /usr for
    // the packages), run as the user manager runs it: its command line with the unit's UMask,
    // stdout a pipe as the journal is, for two users at once (each their own home; the unit
    // passes no --data-dir). Each gets a port of its own, recorded in its server.json and
    // remembered for next time; the banner does not show the token; the workers run with the
    // unit's UMask.
    QString checkUserUnitGivesEachUserAPort(const QString &unitPrefix, const QString &scratchDir) const;

    // The workbench started as the desktop entry starts it (no options, offscreen), while the
    // user unit's server (started as in checkUserUnitGivesEachUserAPort) holds the user's data
    // directory: it attaches to that server and says so, ends with 0 on SIGTERM, and the server
    // goes on.
    QString checkWorkbenchAttachesToTheUnitsServer(const QString &unitPrefix, const QString &scratchDir) const;

private:
    // What the installed user unit runs: its ExecStart, the program found in this tree.
    struct UnitCommand {
        QString program;
        QStringList arguments;
        mode_t umask = 0;
    };
    QString readUserUnit(const QString &unitPrefix, UnitCommand &unit) const;
    // Starts `unit` as the user manager of a user whose home is under `home` would.
    QString startUserUnit(const UnitCommand &unit, const QString &home, ServerProcess &server) const;

    QString m_prefix;
};
