// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace replhost::jupyter {

// One message of the Jupyter messaging protocol (5.3), as its parts.
struct WireMessage {
    QList<QByteArray> identities;  // routing prefix before "<IDS|MSG>"
    QJsonObject header, parentHeader, metadata, content;
    QList<QByteArray> buffers;

    QString type() const { return header.value(QLatin1String("msg_type")).toString(); }
    QString id() const { return header.value(QLatin1String("msg_id")).toString(); }
    QString parentId() const { return parentHeader.value(QLatin1String("msg_id")).toString(); }
};

// Builds, signs, parses and verifies messages of one connection: its HMAC-SHA256 key (an empty
// key signs nothing and accepts any signature, as the protocol says) and its session id.
// Constant after construction; thread-safe.
class WireCodec {
public:
    WireCodec(QByteArray key, QString session);

    // A new message of `type` with a fresh msg_id, this session and the protocol version.
    WireMessage make(const QString &type, const QJsonObject &content,
                     const QJsonObject &parentHeader = {}) const;

    // The frames to send: identities, delimiter, signature, header, parent, metadata, content.
    QList<QByteArray> encode(const WireMessage &message) const;

    // Parses received frames. Errors: "bad_signature" (the signature does not match the key:
    // the message is to be dropped), "malformed" (no delimiter, too few frames, a part that is
    // not a JSON object).
    Result<WireMessage> decode(const QList<QByteArray> &frames) const;

    QString session() const { return m_session; }

private:
    QByteArray sign(const QList<QByteArray> &parts) const;

    QByteArray m_key;
    QString m_session;
};

} // namespace replhost::jupyter
