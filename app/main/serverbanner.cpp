// SPDX-License-Identifier: Apache-2.0
#include "serverbanner.h"

#include "core/engine.h"
#include "http/curlexample.h"

#include <QRegularExpression>
#include <QTextStream>

namespace replhost::app {

namespace {

// One word for a POSIX shell: as it is when it has nothing the shell would act on, else in
// single quotes (a quote inside becomes '\'').
QString shellWord(const QString &text)
{
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_./:+@%,=-]+$"));
    if (plain.match(text).hasMatch())
        return text;
    QString quoted = text;
    quoted.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
    return QLatin1Char('\'') + quoted + QLatin1Char('\'');
}

bool fromEnvironment(const http::TokenStore::Token &token)
{
    return token.source == QLatin1String("REPLHOST_TOKEN");
}

} // namespace

ServerBanner::ServerBanner(QString url, http::TokenStore::Token token, QString dataDir, bool showToken)
    : m_url(std::move(url))
    , m_token(std::move(token))
    , m_dataDir(std::move(dataDir))
    , m_showToken(showToken)
{
}

QString ServerBanner::tokenInShell() const
{
    if (m_showToken)
        return QString::fromLatin1(m_token.value);
    if (fromEnvironment(m_token))
        return QStringLiteral("$REPLHOST_TOKEN");
    return QStringLiteral("$(cat %1)").arg(shellWord(m_token.source));
}

void ServerBanner::print(QTextStream &out) const
{
    out << "replhost-server " << core::Engine::appVersion() << " listening on " << m_url << '\n';
    if (m_showToken) {
        out << "token: " << m_token.value << "  (" << (m_token.created ? "new, saved in " : "from ")
            << m_token.source << ")\n";
    } else if (fromEnvironment(m_token)) {
        out << "token: from $REPLHOST_TOKEN  (not shown: standard output is not a terminal)\n";
    } else {
        out << "token: in " << m_token.source << "  (" << (m_token.created ? "new; " : "")
            << "not shown: standard output is not a terminal)\n";
    }
    out << "data directory: " << m_dataDir << "\n\n";
    out << "Try it (Python):\n"
        << http::CurlExample::python(m_url, tokenInShell(), QStringLiteral("  "));
    out.flush();
}

QString ServerBanner::e2bLine(const QString &capabilityPrefix) const
{
    return QStringLiteral("E2B SDKs (debug mode): sandboxUrl %1%2/%3").arg(m_url, capabilityPrefix, tokenInShell());
}

} // namespace replhost::app
