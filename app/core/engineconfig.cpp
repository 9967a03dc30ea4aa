// SPDX-License-Identifier: Apache-2.0
#include "engineconfig.h"

#include <QDir>
#include <QStandardPaths>

#include <algorithm>

#include <unistd.h>

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

int EngineConfig::resolvedMaxResidentWorkers() const
{
    return maxResidentWorkers > 0 ? maxResidentWorkers : defaultMaxResidentWorkers();
}

int EngineConfig::defaultMaxResidentWorkers()
{
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long pageSize = ::sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || pageSize <= 0)
        return 4;
    const qint64 perWorker = qint64(256) * 1024 * 1024;
    return int(std::clamp<qint64>(qint64(pages) * pageSize / perWorker, 4, 64));
}

} // namespace replhost::core
