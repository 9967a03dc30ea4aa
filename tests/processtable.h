// SPDX-License-Identifier: Apache-2.0
#pragma once
// The machine's running processes as /proc lists them, for tests that check which workers are
// left: the fields of /proc/<pid>/stat they need. A process that has ended (a zombie waits only
// for its parent to collect it) is not running and is not listed.

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QList>
#include <QString>

namespace replhost::testing {

struct ProcessEntry {
    qint64 pid = 0;
    QByteArray name;  // the command name, as in /proc/<pid>/stat
    qint64 parent = 0;
    qint64 group = 0;
};

inline QList<ProcessEntry> runningProcesses()
{
    QList<ProcessEntry> found;
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
        // The name may hold spaces and parentheses: it runs from the first '(' to the last ')'.
        const qsizetype open = line.indexOf('(');
        const qsizetype close = line.lastIndexOf(')');
        if (open < 0 || close < open)
            continue;
        // After the name: state, ppid, pgrp.
        const QList<QByteArray> fields = line.mid(close + 2).split(' ');
        if (fields.size() < 3 || fields.at(0) == "Z")
            continue;
        found.append({pid, line.mid(open + 1, close - open - 1), fields.at(1).toLongLong(),
                      fields.at(2).toLongLong()});
    }
    return found;
}

} // namespace replhost::testing
