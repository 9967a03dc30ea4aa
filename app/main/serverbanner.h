// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "http/tokenstore.h"

#include <QString>

class QTextStream;

namespace replhost::app {

// What replhost-server prints on stdout once it listens: the URL, the token, the data directory,
// a curl walk-through and the URL for E2B's SDKs.
//
// The token is printed only when stdout is a terminal. Anywhere else (a systemd unit's stdout
// is the journal, a started-in-the-background server's is a log file) the output is kept where
// other people or tools may read it, so the banner says where the token is instead: the token
// file, or $REPLHOST_TOKEN; the examples read it from there. Threading: start-up, one thread.
class ServerBanner {
public:
    // `showToken`: whether stdout is a terminal (the caller asks isatty()).
    ServerBanner(QString url, http::TokenStore::Token token, QString dataDir, bool showToken);

    void print(QTextStream &out) const;
    // "E2B SDKs (debug mode): sandboxUrl …/e2b/<token>", with the token as in the examples.
    QString e2bLine(const QString &capabilityPrefix) const;

private:
    // The token as the examples use it: its value, or shell that reads it from where it is.
    QString tokenInShell() const;

    QString m_url;
    http::TokenStore::Token m_token;
    QString m_dataDir;
    bool m_showToken;
};

} // namespace replhost::app
