// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <QByteArray>
#include <QString>

namespace replhost::http {

// The API's bearer token. An override (REPLHOST_TOKEN), when given, wins; otherwise it lives in
// <data dir>/token (mode 0600), generated on first start from 32 random bytes of the system's
// secure generator (64 hex digits) and reused afterwards.
//
// Errors: "io" (the file cannot be read or written), "bad_request" (a token that cannot travel in
// an HTTP header). Threading: call from one thread at start-up.
class TokenStore {
public:
    struct Token {
        QByteArray value;
        QString source;      // "REPLHOST_TOKEN" or the file's path
        bool created = false;
        QString warning;     // e.g. the file was readable by others and has been tightened
    };

    static QString fileName() { return QStringLiteral("token"); }

    // `override`: the value of REPLHOST_TOKEN, read (and removed from the environment, so workers
    // never inherit it) by the caller; empty when not set.
    static Result<Token> load(const QString &dataDir, const QByteArray &override = {});
    // The token in `path` (--token-file: one token for several servers, such as a Kubernetes
    // Secret mounted as a file), surrounding white space ignored. The file is only read: its
    // mode is its owner's business (a mounted Secret is read-only). Errors: "io" (missing,
    // unreadable), "bad_request" (empty, or not a usable token).
    static Result<Token> loadFile(const QString &path);

    // 32 bytes from QRandomGenerator::system(), hex-encoded.
    static QByteArray generate();

    // Printable ASCII without spaces, 16 to 4096 characters.
    static bool isUsable(const QByteArray &token);
};

} // namespace replhost::http
