// SPDX-License-Identifier: Apache-2.0
#pragma once
// The workers an engine suite has running, found in /proc: every process whose parent is the
// test itself, but the worker guard (workers are spawned by the engine in the test's process).

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QList>
#include <QString>

#include <unistd.h>

namespace replhost::core::testing {

// Running processes whose parent is this test, other than the worker guard. A process that has
// ended (a zombie waits only for its parent to collect it) does not count.
inline QList<qint64> workerChildren()
{
    QList<qint64> found;
    const QDir proc(QStringLiteral("/proc"));
    for (const QString &entry : proc.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        bool numeric = false;
        const qint64 pid = entry.toLongLong(&numeric);
        if (!numeric)
            continue;
        QFile stat(proc.filePath(entry + QStringLiteral("/stat")));
        if (!stat.open(QIODevice::ReadOnly))
            continue;
        const QByteArray line = stat.readAll();
        const qsizetype open = line.indexOf('(');
        const qsizetype close = line.lastIndexOf(')');
        if (open < 0 || close < 0)
            continue;
        const QByteArray name = line.mid(open + 1, close - open - 1);
        const QList<QByteArray> fields = line.mid(close + 2).split(' ');
        if (fields.size() < 2 || fields.at(0) == "Z" || name == "replhost-guard")
            continue;
        if (fields.at(1).toLongLong() == qint64(::getpid()))
            found.append(pid);
    }
    return found;
}

} // namespace replhost::core::testing
