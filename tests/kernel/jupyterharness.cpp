// SPDX-License-Identifier: Apache-2.0
#include "jupyterharness.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QProcess>
#include <QTest>

JupyterHarness::JupyterHarness(QString serverDataDir) : m_serverDataDir(std::move(serverDataDir))
{
    for (const char *sub : {"share/jupyter/kernels", "data", "runtime", "config"})
        QDir(m_home.path()).mkpath(QString::fromLatin1(sub));
}

QString JupyterHarness::kernelExecutable()
{
    return QStringLiteral(REPLHOST_KERNEL_EXECUTABLE);
}

QString JupyterHarness::python()
{
    // Debian's: the Jupyter packages are installed for it, whatever python3 comes first on PATH.
    return QStringLiteral("/usr/bin/python3");
}

QString JupyterHarness::jupyterPath() const
{
    return m_home.filePath(QStringLiteral("share/jupyter"));
}

QString JupyterHarness::cliExecutable()
{
    return QStringLiteral(REPLHOST_CLI_EXECUTABLE);
}

JupyterHarness::Run JupyterHarness::cli(const QStringList &arguments, const QMap<QString, QString> &environment) const
{
    return run(cliExecutable(), arguments, {}, environment, 60000);
}

QStringList JupyterHarness::installKernelspecs(const QStringList &arguments)
{
    const Run installed = cli(QStringList{QStringLiteral("--data-dir"), m_serverDataDir, QStringLiteral("--json"),
                                          QStringLiteral("kernelspec"), QStringLiteral("install"),
                                          QStringLiteral("--prefix"), m_home.path()}
                              + arguments);
    QStringList names;
    const QJsonArray specs = QJsonDocument::fromJson(installed.out).object().value(QStringLiteral("installed")).toArray();
    for (const QJsonValue &spec : specs)
        names.append(spec.toObject().value(QStringLiteral("name")).toString());
    if (installed.exitCode != 0 || names.isEmpty())
        qWarning("kernelspec install failed (%d): %s%s", installed.exitCode, installed.out.constData(),
                 installed.err.constData());
    return names;
}

QProcessEnvironment JupyterHarness::environment(const QMap<QString, QString> &extra) const
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("JUPYTER_PATH"), jupyterPath());
    env.insert(QStringLiteral("JUPYTER_DATA_DIR"), m_home.filePath(QStringLiteral("data")));
    env.insert(QStringLiteral("JUPYTER_RUNTIME_DIR"), m_home.filePath(QStringLiteral("runtime")));
    env.insert(QStringLiteral("JUPYTER_CONFIG_DIR"), m_home.filePath(QStringLiteral("config")));
    env.insert(QStringLiteral("IPYTHONDIR"), m_home.filePath(QStringLiteral("config/ipython")));
    // The kernels find their server through --data-dir, never through a URL of the test's own.
    env.remove(QStringLiteral("REPLHOST_URL"));
    env.remove(QStringLiteral("REPLHOST_TOKEN"));
    for (auto it = extra.begin(); it != extra.end(); ++it)
        env.insert(it.key(), it.value());
    return env;
}

JupyterHarness::Run JupyterHarness::run(const QString &program, const QStringList &arguments, const QByteArray &input,
                                        const QMap<QString, QString> &environmentExtra, int timeoutMs) const
{
    QProcess process;
    process.setProcessEnvironment(environment(environmentExtra));
    process.setWorkingDirectory(m_home.path());
    process.start(program, arguments);
    Run result;
    if (!process.waitForStarted()) {
        result.err = process.errorString().toUtf8();
        return result;
    }
    process.write(input);
    process.closeWriteChannel();
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        result.err = "did not finish: " + process.readAllStandardError();
        return result;
    }
    result.out = process.readAllStandardOutput();
    result.err = process.readAllStandardError();
    result.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    return result;
}

QJsonArray JupyterHarness::drive(const QString &kernel, const QJsonArray &steps, const QMap<QString, QString> &env)
{
    const QJsonObject script{{QStringLiteral("kernel"), kernel}, {QStringLiteral("steps"), steps}};
    const Run result = run(python(), {QStringLiteral(REPLHOST_JUPYTER_DRIVER)},
                           QJsonDocument(script).toJson(QJsonDocument::Compact), env);
    const QJsonObject answer = QJsonDocument::fromJson(result.out).object();
    if (result.exitCode != 0 || !answer.contains(QStringLiteral("results"))) {
        m_error = QStringLiteral("jupyterdriver.py exited with %1: %2%3")
                          .arg(result.exitCode)
                          .arg(QString::fromUtf8(result.out.left(2000)), QString::fromUtf8(result.err.right(4000)));
        return {};
    }
    m_error.clear();
    return answer.value(QStringLiteral("results")).toArray();
}

qint64 JupyterHarness::driveAndAbandon(const QString &kernel, const QJsonArray &steps, QJsonArray *results)
{
    const QJsonObject script{{QStringLiteral("kernel"), kernel}, {QStringLiteral("steps"), steps},
                             {QStringLiteral("abandon"), true}};
    const Run result = run(python(), {QStringLiteral(REPLHOST_JUPYTER_DRIVER)},
                           QJsonDocument(script).toJson(QJsonDocument::Compact));
    const QJsonObject answer = QJsonDocument::fromJson(result.out).object();
    const qint64 pid = answer.value(QStringLiteral("kernel_pid")).toInteger();
    if (result.exitCode != 0 || pid <= 0) {
        m_error = QStringLiteral("jupyterdriver.py exited with %1: %2").arg(result.exitCode).arg(QString::fromUtf8(result.err.right(4000)));
        return 0;
    }
    *results = answer.value(QStringLiteral("results")).toArray();
    return pid;
}

QString JupyterHarness::streamText(const QJsonObject &result, const QString &name)
{
    QString text;
    for (const QJsonValue &message : result.value(QStringLiteral("iopub")).toArray()) {
        const QJsonObject object = message.toObject();
        const QJsonObject content = object.value(QStringLiteral("content")).toObject();
        if (object.value(QStringLiteral("msg_type")).toString() == QLatin1String("stream")
            && content.value(QStringLiteral("name")).toString() == name)
            text += content.value(QStringLiteral("text")).toString();
    }
    return text;
}

QJsonObject JupyterHarness::firstMessage(const QJsonObject &result, const QString &type)
{
    for (const QJsonValue &message : result.value(QStringLiteral("iopub")).toArray()) {
        if (message.toObject().value(QStringLiteral("msg_type")).toString() == type)
            return message.toObject().value(QStringLiteral("content")).toObject();
    }
    return {};
}

QJsonObject JupyterHarness::execute(const QString &code, const QString &interruptOn)
{
    QJsonObject step{{QStringLiteral("op"), QStringLiteral("execute")}, {QStringLiteral("code"), code}};
    if (!interruptOn.isEmpty())
        step.insert(QStringLiteral("interrupt_on"), interruptOn);
    return step;
}

QJsonObject JupyterHarness::request(const QString &op, const QJsonObject &fields)
{
    QJsonObject step = fields;
    step.insert(QStringLiteral("op"), op);
    return step;
}
