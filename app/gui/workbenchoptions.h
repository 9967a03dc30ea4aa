// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QString>

#include <optional>

namespace replhost::gui {

// How the workbench window is started. Constant after the window is constructed.
struct WorkbenchOptions {
    // The preferences file (INI). Empty: the platform's QSettings location for replhost.
    QString settingsFile;
    // Start the embedded HTTP server on this port right away (0: any free port), whatever the
    // preference says. Unset: the "server autostart" preference decides.
    std::optional<quint16> servePort;
    // REPLHOST_TOKEN, already taken out of the environment by the caller (empty when not set).
    QByteArray tokenOverride;
    // Closing the window while code runs asks first (the runs are interrupted at exit). Off for
    // embedders and tests that close the window themselves; closeWithoutAsking() skips it.
    bool confirmCloseWhileRunning = false;
};

} // namespace replhost::gui
