// SPDX-License-Identifier: Apache-2.0
#include "wiremessage.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QMessageAuthenticationCode>
#include <QUuid>

namespace replhost::jupyter {

namespace {

const QByteArray kDelimiter = QByteArrayLiteral("<IDS|MSG>");

QByteArray toBytes(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

} // namespace

WireCodec::WireCodec(QByteArray key, QString session)
    : m_key(std::move(key)), m_session(std::move(session))
{
}

WireMessage WireCodec::make(const QString &type, const QJsonObject &content,
                            const QJsonObject &parentHeader) const
{
    WireMessage message;
    message.header = QJsonObject{
        {QStringLiteral("msg_id"), QUuid::createUuid().toString(QUuid::WithoutBraces)},
        {QStringLiteral("session"), m_session},
        {QStringLiteral("username"), QStringLiteral("replhost")},
        {QStringLiteral("date"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
        {QStringLiteral("msg_type"), type},
        {QStringLiteral("version"), QStringLiteral("5.3")},
    };
    message.parentHeader = parentHeader;
    message.content = content;
    return message;
}

QByteArray WireCodec::sign(const QList<QByteArray> &parts) const
{
    if (m_key.isEmpty())
        return {};
    QMessageAuthenticationCode mac(QCryptographicHash::Sha256, m_key);
    for (const QByteArray &part : parts)
        mac.addData(part);
    return mac.result().toHex();
}

QList<QByteArray> WireCodec::encode(const WireMessage &message) const
{
    const QList<QByteArray> parts{toBytes(message.header), toBytes(message.parentHeader),
                                  toBytes(message.metadata), toBytes(message.content)};
    QList<QByteArray> frames = message.identities;
    frames.append(kDelimiter);
    frames.append(sign(parts));
    frames.append(parts);
    frames.append(message.buffers);
    return frames;
}

Result<WireMessage> WireCodec::decode(const QList<QByteArray> &frames) const
{
    const qsizetype delimiter = frames.indexOf(kDelimiter);
    if (delimiter < 0 || frames.size() < delimiter + 6)
        return makeError(QStringLiteral("malformed"),
                         QStringLiteral("a message without the \"<IDS|MSG>\" delimiter and its "
                                        "five parts"));
    const QList<QByteArray> parts = frames.mid(delimiter + 2, 4);
    if (!m_key.isEmpty()) {
        // Compared in constant time, like the protocol's reference implementation.
        const QByteArray expected = sign(parts);
        const QByteArray &given = frames.at(delimiter + 1);
        unsigned char diff = expected.size() == given.size() ? 0 : 1;
        for (qsizetype i = 0; i < std::min(expected.size(), given.size()); ++i)
            diff |= static_cast<unsigned char>(expected.at(i) ^ given.at(i));
        if (diff)
            return makeError(QStringLiteral("bad_signature"),
                             QStringLiteral("a message whose signature does not match the "
                                            "connection's key"));
    }
    WireMessage message;
    message.identities = frames.mid(0, delimiter);
    QJsonObject *targets[] = {&message.header, &message.parentHeader, &message.metadata,
                              &message.content};
    for (int i = 0; i < 4; ++i) {
        QJsonParseError error;
        const QJsonDocument document = QJsonDocument::fromJson(parts.at(i), &error);
        if (error.error != QJsonParseError::NoError || !document.isObject())
            return makeError(QStringLiteral("malformed"),
                             QStringLiteral("a message part that is not a JSON object"));
        *targets[i] = document.object();
    }
    message.buffers = frames.mid(delimiter + 6);
    return message;
}

} // namespace replhost::jupyter
