// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QMap>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

// Jupyter's side of the kernel tests: a temporary Jupyter home (JUPYTER_PATH with replhost's
// kernelspecs, and data, runtime and config dirs of its own, so nothing of the user's is read or
// written) and the real Jupyter programs run in it with Debian's python3 — jupyter_client through
// jupyterdriver.py, and the jupyter command.
//
// Threading: the test thread.
class JupyterHarness {
public:
    // `serverDataDir`: the data dir of the replhost-server the kernels use.
    explicit JupyterHarness(QString serverDataDir);

    // Installs replhost's kernelspecs into the Jupyter home as a user would, with
    // `replhost-cli --data-dir <server's> kernelspec install --prefix <home> <arguments>`
    // ("-l", "python"; "--context", ID). The names of the kernelspecs written; empty (with a
    // warning) when the command failed.
    QStringList installKernelspecs(const QStringList &arguments);
    // The environment the Jupyter programs run in, with `extra` added.
    QProcessEnvironment environment(const QMap<QString, QString> &extra = {}) const;
    QString jupyterPath() const;
    QString home() const { return m_home.path(); }

    // Runs jupyterdriver.py: starts kernel `kernel`, runs `steps` and shuts it down. The results
    // array, one object per step ({"reply": …, "iopub": [{"msg_type", "content"}, …]}); empty
    // with error() set when the driver failed.
    QJsonArray drive(const QString &kernel, const QJsonArray &steps, const QMap<QString, QString> &environment = {});
    // Like drive(), but the driver dies without shutting the kernel down, as a crashed frontend
    // does. The kernel's pid (its results in `results`), or 0 with error() set.
    qint64 driveAndAbandon(const QString &kernel, const QJsonArray &steps, QJsonArray *results);
    QString error() const { return m_error; }

    // Runs a program of Jupyter's (python3 -m … or jupyter …) in the environment. {exit code,
    // stdout, stderr}.
    struct Run {
        int exitCode = -1;
        QByteArray out;
        QByteArray err;
    };
    Run run(const QString &program, const QStringList &arguments, const QByteArray &input = {},
            const QMap<QString, QString> &environment = {}, int timeoutMs = 600000) const;

    // The concatenated text of an execute step's stream messages named `name`.
    static QString streamText(const QJsonObject &result, const QString &name = QStringLiteral("stdout"));
    // The step's first iopub message of type `type` (empty when there is none).
    static QJsonObject firstMessage(const QJsonObject &result, const QString &type);

    // Steps for jupyterdriver.py.
    static QJsonObject execute(const QString &code, const QString &interruptOn = {});
    static QJsonObject request(const QString &op, const QJsonObject &fields = {});

    // Runs replhost-cli with `arguments` in the environment.
    Run cli(const QStringList &arguments, const QMap<QString, QString> &environment = {}) const;

    static QString kernelExecutable();
    static QString cliExecutable();
    static QString python();

private:
    QString m_serverDataDir;
    QTemporaryDir m_home;
    QString m_error;
};
