// SPDX-License-Identifier: Apache-2.0
#include "serverprocess.h"

#include "processtable.h"

#include <QDeadlineTimer>
#include <QFile>
#include <QRegularExpression>

#include <csignal>

#include <sys/stat.h>

ServerProcess::ServerProcess() = default;

ServerProcess::~ServerProcess()
{
    stop(5000);
}

QString ServerProcess::executable()
{
    return QStringLiteral(REPLHOST_SERVER_EXECUTABLE);
}

QString ServerProcess::pluginDir()
{
    return QStringLiteral(REPLHOST_TEST_PLUGIN_DIR);
}

QProcessEnvironment ServerProcess::baseEnvironment(const QMap<QString, QString> &extra)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("REPLHOST_TOKEN"));
    env.remove(QStringLiteral("REPLHOST_DATA_DIR"));
    env.insert(QStringLiteral("REPLHOST_PLUGIN_PATH"), pluginDir());
    for (auto it = extra.begin(); it != extra.end(); ++it)
        env.insert(it.key(), it.value());
    return env;
}

bool ServerProcess::start(const QStringList &extraArguments, const QMap<QString, QString> &environment,
                          const QString &dataDir)
{
    m_error.clear();
    m_stdout.clear();
    m_stderr.clear();
    if (dataDir.isEmpty()) {
        m_tempDir = std::make_unique<QTemporaryDir>();
        m_dataDir = m_tempDir->filePath(QStringLiteral("data"));
    } else {
        m_dataDir = dataDir;
    }
    QMap<QString, QString> env = environment;
    // Keep the user's own plugin directory out of the tests.
    if (!env.contains(QStringLiteral("XDG_DATA_HOME")))
        env.insert(QStringLiteral("XDG_DATA_HOME"), m_dataDir + QStringLiteral("-xdg"));
    return launch(QStringList{QStringLiteral("--data-dir"), m_dataDir} + extraArguments, env);
}

bool ServerProcess::startWithDefaultDataDir(const QStringList &extraArguments,
                                            const QMap<QString, QString> &environment)
{
    m_error.clear();
    m_stdout.clear();
    m_stderr.clear();
    m_dataDir.clear();
    return launch(extraArguments, environment);
}

bool ServerProcess::launch(const QStringList &arguments, const QMap<QString, QString> &environment)
{
    m_process.setProcessEnvironment(baseEnvironment(environment));
    m_process.setProgram(m_executable);
    QStringList all{QStringLiteral("--port"), QStringLiteral("0")};
    // Suites that are not about the warm pool do not pay for a pooled JVM and Node per server.
    if (!arguments.contains(QStringLiteral("--warm-pool")))
        all << QStringLiteral("--warm-pool") << QStringLiteral("0");
    m_process.setArguments(all + arguments);
    if (m_umask)
        m_process.setChildProcessModifier([mask = *m_umask] { ::umask(mask); });
    m_process.start();
    if (!m_process.waitForStarted(10000)) {
        m_error = QStringLiteral("cannot start %1: %2").arg(m_executable, m_process.errorString());
        return false;
    }

    static const QRegularExpression listening(QStringLiteral("listening on http://[^\\s]+:(\\d+)"));
    // Not a terminal, so the banner says where the token is: in a file, or $REPLHOST_TOKEN.
    static const QRegularExpression token(QStringLiteral("^token: (in (.+?)|from \\$REPLHOST_TOKEN)  \\("),
                                          QRegularExpression::MultilineOption);
    static const QRegularExpression dataDirectory(QStringLiteral("^data directory: (.+)$"),
                                                  QRegularExpression::MultilineOption);
    QDeadlineTimer deadline(20000);
    while (!deadline.hasExpired()) {
        m_process.waitForReadyRead(100);
        m_stdout += m_process.readAllStandardOutput();
        const QString out = QString::fromUtf8(m_stdout);
        const auto listen = listening.match(out);
        const auto tokenMatch = token.match(out);
        if (listen.hasMatch() && tokenMatch.hasMatch()) {
            m_port = quint16(listen.captured(1).toUInt());
            if (tokenMatch.captured(2).isEmpty()) {
                m_token = m_process.processEnvironment().value(QStringLiteral("REPLHOST_TOKEN")).toUtf8();
            } else {
                QFile file(tokenMatch.captured(2));
                m_token = file.open(QIODevice::ReadOnly) ? file.readAll().trimmed() : QByteArray();
            }
            if (const auto directory = dataDirectory.match(out); directory.hasMatch())
                m_dataDir = directory.captured(1);
            return true;
        }
        if (m_process.state() == QProcess::NotRunning)
            break;
    }
    m_stderr += m_process.readAllStandardError();
    m_error = QStringLiteral("the server did not start (exit %1): %2 %3")
                      .arg(m_process.exitCode())
                      .arg(QString::fromUtf8(m_stdout), QString::fromUtf8(m_stderr));
    stop(2000);
    return false;
}

int ServerProcess::stop(int timeoutMs)
{
    if (m_process.state() == QProcess::NotRunning)
        return m_process.exitStatus() == QProcess::NormalExit ? m_process.exitCode() : -1;
    ::kill(pid_t(m_process.processId()), SIGTERM);
    if (!m_process.waitForFinished(timeoutMs)) {
        m_process.kill();
        m_process.waitForFinished(5000);
        return -1;
    }
    m_stdout += m_process.readAllStandardOutput();
    m_stderr += m_process.readAllStandardError();
    return m_process.exitStatus() == QProcess::NormalExit ? m_process.exitCode() : -1;
}

bool ServerProcess::isRunning() const
{
    return m_process.state() == QProcess::Running;
}

qint64 ServerProcess::pid() const
{
    return m_process.processId();
}

qint64 ServerProcess::residentKiB() const
{
    QFile status(QStringLiteral("/proc/%1/status").arg(pid()));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').front().toLongLong();
    }
    return -1;
}

bool ServerProcess::isAlive(qint64 pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (pid <= 0 || !stat.open(QIODevice::ReadOnly))
        return false;
    const QByteArray text = stat.readAll();
    const qsizetype paren = text.lastIndexOf(')');
    return paren > 0 && text.mid(paren + 2, 1) != "Z";
}

QList<qint64> ServerProcess::membersOfGroup(qint64 group)
{
    QList<qint64> members;
    for (const replhost::testing::ProcessEntry &process : replhost::testing::runningProcesses()) {
        if (process.group == group)
            members.append(process.pid);
    }
    return members;
}

QByteArray ServerProcess::output()
{
    m_stdout += m_process.readAllStandardOutput();
    return m_stdout;
}

QByteArray ServerProcess::errors()
{
    m_stderr += m_process.readAllStandardError();
    return m_stderr;
}

ServerProcess::Run ServerProcess::runOnce(const QStringList &arguments,
                                          const QMap<QString, QString> &environment, int timeoutMs)
{
    QProcess process;
    process.setProcessEnvironment(baseEnvironment(environment));
    process.start(executable(), arguments);
    Run run;
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished(5000);
        return run;
    }
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.out = process.readAllStandardOutput();
    run.err = process.readAllStandardError();
    return run;
}
