// SPDX-License-Identifier: Apache-2.0
#include "mcpinputstate.h"

#include <QCryptographicHash>
#include <QMessageAuthenticationCode>
#include <QRandomGenerator>

namespace replhost::http {

namespace {

// "v1." base64url(execution id) "." base64url(HMAC-SHA256 of the first two parts)
constexpr char kPrefix[] = "v1.";
constexpr auto kBase64 = QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals;
// Longer than any execution id (ids are at most 256 characters in the worker protocol).
constexpr qsizetype kMaxStateBytes = 1024;

const QByteArray &key()
{
    static const QByteArray secret = [] {
        QByteArray bytes(32, Qt::Uninitialized);
        QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(bytes.data()), bytes.size() / 4);
        return bytes;
    }();
    return secret;
}

QByteArray signatureOf(const QByteArray &signedPart)
{
    return QMessageAuthenticationCode::hash(signedPart, key(), QCryptographicHash::Sha256).toBase64(kBase64);
}

} // namespace

QString McpInputState::make(const QString &executionId)
{
    // Padded: the strict decoding below takes it as it is.
    const QByteArray signedPart = kPrefix + executionId.toUtf8().toBase64(QByteArray::Base64UrlEncoding);
    return QString::fromLatin1(signedPart + '.' + signatureOf(signedPart));
}

std::optional<QString> McpInputState::read(const QString &state)
{
    return read(state.toUtf8());
}

std::optional<QString> McpInputState::read(const QByteArray &state)
{
    if (state.size() > kMaxStateBytes || !state.startsWith(kPrefix))
        return std::nullopt;
    const qsizetype dot = state.lastIndexOf('.');
    if (dot < qsizetype(sizeof(kPrefix) - 1))
        return std::nullopt;
    const QByteArray signedPart = state.first(dot);
    const QByteArray expected = signatureOf(signedPart);
    const QByteArray given = state.sliced(dot + 1);
    // Compared in time that does not depend on where they differ.
    if (given.size() != expected.size())
        return std::nullopt;
    char difference = 0;
    for (qsizetype i = 0; i < given.size(); ++i)
        difference |= char(given.at(i) ^ expected.at(i));
    if (difference != 0)
        return std::nullopt;
    const auto decoded = QByteArray::fromBase64Encoding(signedPart.sliced(sizeof(kPrefix) - 1),
                                                        QByteArray::Base64UrlEncoding | QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded)
        return std::nullopt;
    return QString::fromUtf8(*decoded);
}

} // namespace replhost::http
