// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <QString>

namespace replhost::http {

// <data dir>/server.json, {"url": "http://127.0.0.1:49999", "pid": 1234}: how a client on this
// machine (replhost-cli) finds the server that owns a data directory. Written once the server
// listens, removed when it exits cleanly. A server that was killed leaves it behind, so a reader
// must check that the pid still runs before trusting the URL. The data dir's lock guarantees one
// server per directory, hence one writer.
//
// The file is replaced atomically (a temporary file renamed into place): a reader sees the old
// content or the new, never half of it. Errors: "io". Threading: the thread that owns the server.
class ServerUrlFile {
public:
    explicit ServerUrlFile(QString dataDir);
    // Removes the file if this object wrote it.
    ~ServerUrlFile();
    ServerUrlFile(const ServerUrlFile &) = delete;
    ServerUrlFile &operator=(const ServerUrlFile &) = delete;

    static QString fileName() { return QStringLiteral("server.json"); }
    QString path() const;

    Result<void> write(const QString &url, qint64 pid);
    // Removes the file if this object wrote it; the server calls it before releasing the data dir.
    void remove();

private:
    QString m_dataDir;
    bool m_written = false;
};

} // namespace replhost::http
