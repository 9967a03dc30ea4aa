// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>
#include <optional>

#include <sys/types.h>

// A real replhost-server process for a test: its own temporary data directory, a free loopback
// port (--port 0; the port is read from the "listening on" line), the build tree's plugins.
//
// The process is stopped with SIGTERM in stop() or the destructor. Threading: the test thread.
class ServerProcess {
public:
    ServerProcess();
    ~ServerProcess();

    // Starts the server and waits until it listens. `dataDir` empty: a fresh temporary one.
    // On failure returns false and error() says why (with the server's stderr).
    bool start(const QStringList &extraArguments = {}, const QMap<QString, QString> &environment = {},
               const QString &dataDir = {});
    // Like start(), but without --data-dir: the server resolves its default data directory from
    // `environment` (REPLHOST_DATA_DIR, XDG_DATA_HOME, HOME), and dataDir() is the one it prints.
    bool startWithDefaultDataDir(const QStringList &extraArguments, const QMap<QString, QString> &environment);
    // Starts this server binary instead of the build tree's (an installed or unpacked copy).
    // Call before start().
    void setExecutable(const QString &path) { m_executable = path; }
    // Starts the server with this file mode creation mask (as a unit's UMask= does) instead of
    // the test's own. Call before start().
    void setUmask(mode_t mask) { m_umask = mask; }
    // SIGTERM, then wait. Returns the exit code (-1 if it had to be killed or crashed).
    int stop(int timeoutMs = 15000);

    bool isRunning() const;
    QString error() const { return m_error; }

    quint16 port() const { return m_port; }
    QByteArray token() const { return m_token; }
    QString dataDir() const { return m_dataDir; }
    qint64 pid() const;
    // Resident memory of the server process in KiB (from /proc), or -1.
    qint64 residentKiB() const;
    // What the server has written to stdout and stderr so far.
    QByteArray output();
    QByteArray errors();

    // Whether process `pid` runs (exists and is not a zombie waiting to be reaped).
    static bool isAlive(qint64 pid);
    // The processes (not zombies) whose process group is `group`.
    static QList<qint64> membersOfGroup(qint64 group);

    static QString executable();
    static QString pluginDir();
    // Runs the server binary to completion (e.g. --version, or a second server expected to
    // refuse to start). Returns {exit code, stdout, stderr}.
    struct Run {
        int exitCode = -1;
        QByteArray out;
        QByteArray err;
    };
    static Run runOnce(const QStringList &arguments, const QMap<QString, QString> &environment = {},
                       int timeoutMs = 20000);

private:
    static QProcessEnvironment baseEnvironment(const QMap<QString, QString> &extra);
    bool launch(const QStringList &arguments, const QMap<QString, QString> &environment);

    std::unique_ptr<QTemporaryDir> m_tempDir;
    QProcess m_process;
    QByteArray m_stdout;
    QByteArray m_stderr;
    QString m_dataDir;
    QString m_error;
    QByteArray m_token;
    quint16 m_port = 0;
    QString m_executable = executable();
    std::optional<mode_t> m_umask;
};
