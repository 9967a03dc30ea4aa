// SPDX-License-Identifier: Apache-2.0
#include "replhost/sdk/driverfiles.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMutex>
#include <QSaveFile>
#include <QStandardPaths>

#include <sys/stat.h>

namespace replhost::sdk {

namespace {

// $REPLHOST_CACHE_DIR wins (tests, packaged installs with a read-only home); then the
// application's cache location; then the XDG default when no application object names one.
QString driverDirectory()
{
    QString root = qEnvironmentVariable("REPLHOST_CACHE_DIR");
    if (root.isEmpty() && QCoreApplication::instance()
        && !QCoreApplication::applicationName().isEmpty())
        root = QStandardPaths::writableLocation(QStandardPaths::CacheLocation);
    if (root.isEmpty()) {
        const QString xdg = qEnvironmentVariable("XDG_CACHE_HOME");
        root = (xdg.isEmpty() ? QDir::homePath() + QStringLiteral("/.cache") : xdg)
               + QStringLiteral("/replhost");
    }
    return root + QStringLiteral("/drivers");
}

bool hasContent(const QString &path, const QByteArray &content)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly) || file.size() != content.size())
        return false;
    return file.readAll() == content;
}

} // namespace

Result<QString> materializeDriver(const QString &resourcePath)
{
    // One writer per process at a time; across processes the rename below keeps readers safe.
    static QMutex mutex;
    QMutexLocker locker(&mutex);

    QFile resource(resourcePath);
    if (!resource.open(QIODevice::ReadOnly))
        return makeError(QStringLiteral("not_found"),
                         QStringLiteral("driver resource %1 does not exist; the plugin is "
                                        "incomplete, reinstall it")
                             .arg(resourcePath));
    const QByteArray content = resource.readAll();

    const QFileInfo info(resourcePath);
    const QByteArray digest =
        QCryptographicHash::hash(content, QCryptographicHash::Sha256).toHex().left(16);
    QString name = info.completeBaseName() + QLatin1Char('-') + QString::fromLatin1(digest);
    if (!info.suffix().isEmpty())
        name += QLatin1Char('.') + info.suffix();

    const QString directory = driverDirectory();
    const QString path = directory + QLatin1Char('/') + name;
    // The name carries the content hash, so an existing file with the same bytes is this driver.
    // Anything else there (damaged, edited) is replaced.
    if (!hasContent(path, content)) {
        if (!QDir().mkpath(directory))
            return makeError(QStringLiteral("unavailable"),
                             QStringLiteral("cannot create the driver cache directory %1; make it "
                                            "writable or set REPLHOST_CACHE_DIR")
                                 .arg(directory));
        // QSaveFile writes a temporary file beside the target and renames it over the target:
        // a concurrent reader sees the old file or the complete new one, never a partial one.
        QSaveFile file(path);
        if (!file.open(QIODevice::WriteOnly) || file.write(content) != content.size()
            || ::fchmod(file.handle(), 0755) != 0 || !file.commit())
            return makeError(QStringLiteral("unavailable"),
                             QStringLiteral("cannot write driver file %1: %2; make the directory "
                                            "writable or set REPLHOST_CACHE_DIR")
                                 .arg(path, file.errorString()));
    }
    return path;
}

} // namespace replhost::sdk
