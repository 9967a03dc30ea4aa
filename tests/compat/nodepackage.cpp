// SPDX-License-Identifier: Apache-2.0
#include "nodepackage.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>

NodePackage::NodePackage(QString sourceDir, QString installDir)
    : m_sourceDir(std::move(sourceDir)), m_installDir(std::move(installDir))
{
}

QString NodePackage::unavailableReason(int minimumNodeMajor)
{
    const QString node = QStandardPaths::findExecutable(QStringLiteral("node"));
    if (node.isEmpty() || QStandardPaths::findExecutable(QStringLiteral("npm")).isEmpty())
        return QStringLiteral("node and npm are needed to run the SDK (scripts/setup installs nodejs)");
    QProcess version;
    version.start(node, {QStringLiteral("--version")});
    if (!version.waitForFinished(30000))
        return QStringLiteral("node --version did not answer");
    static const QRegularExpression major(QStringLiteral("^v(\\d+)\\."));
    const QString text = QString::fromLatin1(version.readAllStandardOutput()).trimmed();
    const auto match = major.match(text);
    if (!match.hasMatch() || match.captured(1).toInt() < minimumNodeMajor)
        return QStringLiteral("the SDK needs Node %1 or newer; this is %2").arg(minimumNodeMajor).arg(text);
    return {};
}

QString NodePackage::install(const QStringList &scripts, const QString &installedMarker) const
{
    if (!QDir().mkpath(m_installDir))
        return QStringLiteral("cannot create %1").arg(m_installDir);
    bool manifestChanged = false;
    const QStringList manifests{QStringLiteral("package.json"), QStringLiteral("package-lock.json")};
    for (const QString &name : manifests + scripts) {
        QFile from(QDir(m_sourceDir).filePath(name));
        if (!from.open(QIODevice::ReadOnly))
            return QStringLiteral("cannot read %1").arg(from.fileName());
        const QByteArray content = from.readAll();
        QFile to(QDir(m_installDir).filePath(name));
        if (to.open(QIODevice::ReadOnly) && to.readAll() == content)
            continue;
        to.close();
        manifestChanged = manifestChanged || manifests.contains(name);
        if (!to.open(QIODevice::WriteOnly | QIODevice::Truncate) || to.write(content) != content.size())
            return QStringLiteral("cannot write %1").arg(to.fileName());
    }
    if (!manifestChanged && QFile::exists(QDir(m_installDir).filePath(installedMarker)))
        return {};
    QProcess npm;
    npm.setProcessChannelMode(QProcess::MergedChannels);
    npm.start(QStandardPaths::findExecutable(QStringLiteral("npm")),
              {QStringLiteral("ci"), QStringLiteral("--prefix"), m_installDir,
               QStringLiteral("--no-audit"), QStringLiteral("--no-fund")});
    if (!npm.waitForFinished(300000))
        return QStringLiteral("npm ci did not finish within 5 minutes");
    if (npm.exitStatus() != QProcess::NormalExit || npm.exitCode() != 0)
        return QStringLiteral("npm ci failed:\n") + QString::fromUtf8(npm.readAll());
    return {};
}

NodePackage::Run NodePackage::runTests(const QString &script, const QProcessEnvironment &environment,
                                       int timeoutMs) const
{
    QProcess node;
    node.setProcessEnvironment(environment);
    node.setWorkingDirectory(m_installDir);
    node.setProcessChannelMode(QProcess::MergedChannels);
    node.start(QStandardPaths::findExecutable(QStringLiteral("node")),
               {QStringLiteral("--test"), QStringLiteral("--test-reporter=spec"), script});
    Run run;
    run.finished = node.waitForFinished(timeoutMs);
    if (!run.finished) {
        node.kill();
        node.waitForFinished(5000);
    }
    run.exitCode = node.exitStatus() == QProcess::NormalExit ? node.exitCode() : -1;
    run.output = node.readAll();
    return run;
}

bool NodePackage::Run::passed() const
{
    static const QRegularExpression passCount(QStringLiteral("(?:^|\\n)\\S*\\s*pass (\\d+)"));
    static const QRegularExpression failCount(QStringLiteral("(?:^|\\n)\\S*\\s*fail (\\d+)"));
    const QString text = QString::fromUtf8(output);
    const auto pass = passCount.match(text);
    const auto fail = failCount.match(text);
    return finished && exitCode == 0 && pass.hasMatch() && pass.captured(1).toInt() > 0
            && fail.hasMatch() && fail.captured(1).toInt() == 0;
}
