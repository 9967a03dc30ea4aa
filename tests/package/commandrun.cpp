// SPDX-License-Identifier: Apache-2.0
#include "commandrun.h"

#include <QProcess>
#include <QProcessEnvironment>

QString CommandRun::describe() const
{
    const QByteArray detail = err.trimmed().isEmpty() ? out.trimmed() : err.trimmed();
    // The end of a long log is where the reason is.
    return QStringLiteral("%1 exited with %2: %3")
            .arg(commandLine)
            .arg(exitCode)
            .arg(QString::fromUtf8(detail.right(6000)));
}

CommandRun CommandRun::run(const QString &program, const QStringList &arguments,
                           const QMap<QString, QString> &environment,
                           const QString &workingDirectory, int timeoutMs)
{
    CommandRun result;
    result.commandLine = (QStringList{program} + arguments).join(QLatin1Char(' '));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (auto it = environment.begin(); it != environment.end(); ++it) {
        if (it.value().isEmpty())
            env.remove(it.key());
        else
            env.insert(it.key(), it.value());
    }
    QProcess process;
    process.setProcessEnvironment(env);
    if (!workingDirectory.isEmpty())
        process.setWorkingDirectory(workingDirectory);
    process.start(program, arguments);
    if (!process.waitForStarted(30000)) {
        result.err = process.errorString().toUtf8();
        return result;
    }
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished(5000);
        result.err = "timed out; " + process.readAllStandardError();
        return result;
    }
    result.out = process.readAllStandardOutput();
    result.err = process.readAllStandardError();
    if (process.exitStatus() == QProcess::NormalExit)
        result.exitCode = process.exitCode();
    return result;
}
