// SPDX-License-Identifier: Apache-2.0
#include "engineconfig.h"

#include <QDir>
#include <QStandardPaths>

namespace replhost::core {

QString EngineConfig::resolvedDataDir() const
{
    if (!dataDir.isEmpty())
        return QDir(dataDir).absolutePath();
    const QString fromEnv = qEnvironmentVariable("REPLHOST_DATA_DIR");
    if (!fromEnv.isEmpty())
        return QDir(fromEnv).absolutePath();
    QString xdg = qEnvironmentVariable("XDG_DATA_HOME");
    if (xdg.isEmpty())
        xdg = QDir::home().filePath(QStringLiteral(".local/share"));
    return QDir(xdg).filePath(QStringLiteral("replhost"));
}

} // namespace replhost::core
