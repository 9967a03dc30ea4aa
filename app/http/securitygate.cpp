// SPDX-License-Identifier: Apache-2.0
#include "securitygate.h"

#include "httprequest.h"

#include <QUrl>

namespace replhost::http {

namespace {

// Compares a credential sent with the token without an early exit: every byte sent is compared
// (with the token repeated as far as needed) whatever the lengths, so the time taken depends on
// the length of what was sent alone and says nothing about how much of a guess was right, nor
// about the token's length. No digest is needed for that.
bool constantTimeEquals(QByteArrayView sent, QByteArrayView token)
{
    if (token.isEmpty())
        return false;
    unsigned diff = sent.size() == token.size() ? 0u : 1u;
    qsizetype t = 0;
    for (const char c : sent) {
        diff |= static_cast<unsigned char>(c ^ token[t]);
        t = t + 1 == token.size() ? 0 : t + 1;
    }
    return diff == 0;
}

// `path` is `prefix` or lies below it ("prefix/…"), compared where it lies: these run on every
// request, and building "prefix/" for the comparison allocated each time.
bool isUnder(QStringView path, QStringView prefix)
{
    return path.startsWith(prefix)
            && (path.size() == prefix.size() || path.at(prefix.size()) == QLatin1Char('/'));
}

QString hostName(QString host)
{
    host = host.trimmed().toLower();
    if (host.startsWith(QLatin1Char('[')) && host.endsWith(QLatin1Char(']')))
        host = host.mid(1, host.size() - 2);
    if (host.endsWith(QLatin1Char('.')))
        host.chop(1);
    return host;
}

} // namespace

SecurityGate::SecurityGate(QByteArray token, const QStringList &extraHosts,
                           const QStringList &extraOrigins)
    : m_token(std::move(token))
{
    m_hosts = {QStringLiteral("localhost"), QStringLiteral("127.0.0.1"), QStringLiteral("::1")};
    for (const QString &host : extraHosts) {
        if (!host.trimmed().isEmpty())
            m_hosts.insert(hostName(host));
    }
    for (const QString &origin : extraOrigins) {
        const QString normalized = normalizeOrigin(origin);
        if (!normalized.isEmpty())
            m_extraOrigins.append(normalized);
    }
}

void SecurityGate::setEndpoint(const QHostAddress &address, quint16 port)
{
    if (!address.isNull() && address != QHostAddress::Any && address != QHostAddress::AnyIPv4
        && address != QHostAddress::AnyIPv6) {
        m_hosts.insert(hostName(address.toString()));
    }
    m_localOrigins.clear();
    for (const QString &host : {QStringLiteral("localhost"), QStringLiteral("127.0.0.1"),
                                QStringLiteral("[::1]")}) {
        m_localOrigins.insert(QStringLiteral("http://%1:%2").arg(host).arg(port));
    }
}

QString SecurityGate::normalizeOrigin(const QString &origin)
{
    const QUrl url(origin.trimmed(), QUrl::StrictMode);
    if (!url.isValid() || url.host().isEmpty())
        return {};
    const QString scheme = url.scheme().toLower();
    if (scheme != QLatin1String("http") && scheme != QLatin1String("https"))
        return {};
    if (!url.path().isEmpty() && url.path() != QLatin1String("/"))
        return {};
    const int port = url.port(scheme == QLatin1String("https") ? 443 : 80);
    QString host = url.host().toLower();
    if (host.contains(QLatin1Char(':')))
        host = QLatin1Char('[') + host + QLatin1Char(']');
    return QStringLiteral("%1://%2:%3").arg(scheme, host).arg(port);
}

bool SecurityGate::isPlainLocalHost(QByteArrayView host)
{
    // Exactly a local name, with a port or without: what every local client sends. Anything
    // else (case, spaces, a trailing dot, other names) is judged by the general rules.
    for (const QByteArrayView name : {QByteArrayView("127.0.0.1"), QByteArrayView("localhost"),
                                      QByteArrayView("[::1]")}) {
        if (!host.startsWith(name))
            continue;
        const QByteArrayView port = host.sliced(name.size());
        if (port.isEmpty())
            return true;
        if (port.front() != ':' || port.size() < 2 || port.size() > 6)
            return false;
        int value = 0;
        for (const char c : port.sliced(1)) {
            if (c < '0' || c > '9')
                return false;
            value = value * 10 + (c - '0');
        }
        return value <= 65535;
    }
    return false;
}

Result<void> SecurityGate::checkHost(const QByteArray &hostHeader) const
{
    if (isPlainLocalHost(hostHeader))
        return {};  // the usual case, without building strings
    const QString value = QString::fromLatin1(hostHeader).trimmed();
    if (value.isEmpty())
        return makeError(QStringLiteral("bad_request"), QStringLiteral("the Host header is missing"));

    QString name = value;
    QString port;
    if (value.startsWith(QLatin1Char('['))) {
        const qsizetype close = value.indexOf(QLatin1Char(']'));
        if (close > 0) {
            name = value.left(close + 1);
            const QString rest = value.mid(close + 1);
            if (rest.startsWith(QLatin1Char(':')))
                port = rest.mid(1);
            else if (!rest.isEmpty())
                name.clear();
        } else {
            name.clear();
        }
    } else if (const qsizetype colon = value.lastIndexOf(QLatin1Char(':')); colon >= 0) {
        name = value.left(colon);
        port = value.mid(colon + 1);
    }
    bool portOk = true;
    if (!port.isEmpty())
        port.toUShort(&portOk);
    if (!name.isEmpty() && portOk && m_hosts.contains(hostName(name)))
        return {};
    return makeError(QStringLiteral("forbidden"),
                     QStringLiteral("Host '%1' is not allowed: address the server as localhost, "
                                    "127.0.0.1 or [::1], or start it with --allow-host %2")
                             .arg(value, hostName(name.isEmpty() ? value : name)));
}

Result<void> SecurityGate::checkOrigin(const QByteArray &origin) const
{
    if (origin.isEmpty())
        return {};
    const QString normalized = normalizeOrigin(QString::fromLatin1(origin));
    if (!normalized.isEmpty()
        && (m_localOrigins.contains(normalized) || m_extraOrigins.contains(normalized))) {
        return {};
    }
    return makeError(QStringLiteral("forbidden"),
                     QStringLiteral("Origin '%1' is not allowed: web pages may not call this "
                                    "server unless it is started with --allow-origin %1")
                             .arg(QString::fromLatin1(origin)));
}

Result<void> SecurityGate::checkToken(const QByteArray &authorization) const
{
    const QByteArrayView value = QByteArrayView(authorization).trimmed();
    const qsizetype space = value.indexOf(' ');
    if (value.isEmpty() || space < 0
        || value.first(space).compare("bearer", Qt::CaseInsensitive) != 0) {
        return makeError(QStringLiteral("unauthorized"),
                         QStringLiteral("missing bearer token: send 'Authorization: Bearer <token>' "
                                        "(the token is printed when the server starts and kept in "
                                        "<data dir>/token)"));
    }
    if (!constantTimeEquals(value.sliced(space + 1).trimmed(), m_token))
        return makeError(QStringLiteral("unauthorized"), QStringLiteral("invalid token"));
    return {};
}

void SecurityGate::acceptTokenHeader(const QString &pathPrefix, const QByteArray &header)
{
    m_tokenHeaders.append({pathPrefix, header});
}

void SecurityGate::acceptTokenInPath(const QString &pathPrefix)
{
    m_tokenPathPrefixes.append(pathPrefix);
}

void SecurityGate::takePathToken(HttpRequest &request) const
{
    for (const QString &prefix : m_tokenPathPrefixes) {
        if (!isUnder(request.path, prefix) || request.path.size() == prefix.size())
            continue;
        const qsizetype start = prefix.size() + 1;
        qsizetype end = request.path.indexOf(QLatin1Char('/'), start);
        if (end < 0)
            end = request.path.size();
        if (end == start)
            return;
        request.pathToken = QUrl::fromPercentEncoding(request.path.mid(start, end - start).toUtf8()).toUtf8();
        request.path.replace(start, end - start, QStringLiteral("{token}"));
        return;
    }
}

Result<void> SecurityGate::checkToken(const HttpRequest &request) const
{
    const QByteArray authorization = request.header("authorization");
    if (authorization.isEmpty() && !request.pathToken.isEmpty()) {
        if (constantTimeEquals(request.pathToken, m_token))
            return {};
        // Never quote the token sent: it is a credential, right or wrong.
        return makeError(QStringLiteral("unauthorized"), QStringLiteral("invalid token in the path"));
    }
    QList<QByteArray> accepted;
    for (const auto &[prefix, header] : m_tokenHeaders) {
        if (isUnder(request.path, prefix))
            accepted.append(header);
    }
    if (!authorization.isEmpty() || accepted.isEmpty())
        return checkToken(authorization);
    // Any one of them may carry the token: a client can send its own key in one header and the
    // token it was handed in another.
    QByteArrayList invalid;
    for (const QByteArray &header : std::as_const(accepted)) {
        const QByteArray value = request.header(header).trimmed();
        if (value.isEmpty())
            continue;
        if (constantTimeEquals(value, m_token))
            return {};
        invalid.append(header);
    }
    if (!invalid.isEmpty())
        return makeError(QStringLiteral("unauthorized"),
                         QStringLiteral("invalid token in %1").arg(QString::fromLatin1(invalid.join(", "))));
    return makeError(QStringLiteral("unauthorized"),
                     QStringLiteral("missing token: send 'Authorization: Bearer <token>' or the token "
                                    "in one of the headers %1 (the token is printed when the server "
                                    "starts and kept in <data dir>/token)")
                             .arg(QString::fromLatin1(accepted.join(", "))));
}

} // namespace replhost::http
