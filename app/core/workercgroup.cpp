// SPDX-License-Identifier: Apache-2.0
#include "workercgroup.h"

#include <QDir>
#include <QFile>
#include <QLoggingCategory>
#include <QThread>

#include <cerrno>
#include <cstring>

#include <signal.h>
#include <unistd.h>

namespace replhost::core {

Q_LOGGING_CATEGORY(lcCgroup, "replhost.cgroup")

namespace {

// Long enough for thousands of processes to die, short enough not to hang the engine thread
// on a cgroup that cannot be emptied (a process stuck in uninterruptible sleep).
constexpr int kRemoveAttempts = 400;
constexpr int kRemovePauseMs = 5;

bool writeFile(const QString &path, const QByteArray &text)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Unbuffered) && file.write(text) == text.size();
}

// SIGKILLs every pid listed; returns how many were listed.
int killListed(const QString &procsFile)
{
    QFile file(procsFile);
    if (!file.open(QIODevice::ReadOnly))
        return 0;
    int listed = 0;
    for (const QByteArray &line : file.readAll().split('\n')) {
        bool ok = false;
        const pid_t pid = pid_t(line.toLongLong(&ok));
        if (ok && pid > 0) {
            ::kill(pid, SIGKILL);
            ++listed;
        }
    }
    return listed;
}

} // namespace

WorkerCgroup::WorkerCgroup(QStringList directories, QObject *parent)
    : QObject(parent), m_directories(std::move(directories))
{
}

WorkerCgroup::~WorkerCgroup()
{
    for (const QString &directory : std::as_const(m_directories))
        removeDirectory(directory);
}

QStringList WorkerCgroup::procsFiles() const
{
    QStringList files;
    for (const QString &directory : m_directories)
        files.append(directory + QStringLiteral("/cgroup.procs"));
    return files;
}

bool WorkerCgroup::removeDirectory(const QString &directory)
{
    const QString procs = directory + QStringLiteral("/cgroup.procs");
    // Nothing new may start while the rest is being killed: a pids cgroup refuses every fork
    // from now on, and cgroup v2 kills the whole cgroup in one write.
    writeFile(directory + QStringLiteral("/pids.max"), "0");
    writeFile(directory + QStringLiteral("/cgroup.kill"), "1");
    const QByteArray path = QFile::encodeName(directory);
    for (int attempt = 0; attempt < kRemoveAttempts; ++attempt) {
        killListed(procs);
        // Fails with EBUSY while a killed process has not finished exiting.
        if (::rmdir(path.constData()) == 0 || errno == ENOENT)
            return true;
        if (errno != EBUSY) {
            qCWarning(lcCgroup) << "cannot remove" << directory << std::strerror(errno);
            return false;
        }
        QThread::msleep(kRemovePauseMs);
    }
    qCWarning(lcCgroup) << "cannot remove" << directory << "yet: processes are still in it";
    return false;
}

} // namespace replhost::core
