// SPDX-License-Identifier: Apache-2.0
#include "serverurlfile.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

namespace replhost::http {

ServerUrlFile::ServerUrlFile(QString dataDir) : m_dataDir(std::move(dataDir)) {}

ServerUrlFile::~ServerUrlFile()
{
    remove();
}

QString ServerUrlFile::path() const
{
    return QDir(m_dataDir).filePath(fileName());
}

Result<void> ServerUrlFile::write(const QString &url, qint64 pid)
{
    const QByteArray content =
            QJsonDocument(QJsonObject{{QStringLiteral("url"), url}, {QStringLiteral("pid"), pid}})
                    .toJson(QJsonDocument::Compact)
            + '\n';
    QSaveFile file(path());
    if (!file.open(QIODevice::WriteOnly) || file.write(content) != content.size() || !file.commit()) {
        return makeError(QStringLiteral("io"),
                         QStringLiteral("cannot write %1: %2").arg(path(), file.errorString()));
    }
    m_written = true;
    return {};
}

void ServerUrlFile::remove()
{
    if (m_written)
        QFile::remove(path());
    m_written = false;
}

} // namespace replhost::http
