// SPDX-License-Identifier: Apache-2.0
#include "rememberedport.h"

#include <QDir>
#include <QFile>
#include <QSaveFile>

namespace replhost::app {

quint16 RememberedPort::read(const QString &dataDir)
{
    QFile file(QDir(dataDir).filePath(fileName()));
    if (!file.open(QIODevice::ReadOnly))
        return 0;
    bool ok = false;
    const uint port = file.read(16).trimmed().toUInt(&ok);
    return ok && port > 0 && port <= 65535 ? quint16(port) : 0;
}

Result<void> RememberedPort::write(const QString &dataDir, quint16 port)
{
    const QString path = QDir(dataDir).filePath(fileName());
    const QByteArray content = QByteArray::number(port) + '\n';
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(content) != content.size() || !file.commit())
        return makeError(QStringLiteral("io"), QStringLiteral("cannot write %1: %2").arg(path, file.errorString()));
    return {};
}

} // namespace replhost::app
