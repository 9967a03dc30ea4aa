// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QMap>
#include <QString>
#include <QStringList>

// One external program run to completion, as the packaging tests run cmake, cpack, dpkg and
// lintian. Threading: the calling thread, which it blocks.
struct CommandRun {
    int exitCode = -1;  // -1: did not start, crashed or timed out
    QByteArray out;
    QByteArray err;

    bool succeeded() const { return exitCode == 0; }
    // "<program> <arguments> exited with N: <stderr, else stdout>", for failure messages.
    QString describe() const;

    // Runs `program` (a name on PATH or a path) with `arguments`, the test's environment plus
    // `environment` (an empty value removes the variable), in `workingDirectory` when given.
    static CommandRun run(const QString &program, const QStringList &arguments,
                          const QMap<QString, QString> &environment = {},
                          const QString &workingDirectory = {}, int timeoutMs = 600000);

    QString commandLine;
};
