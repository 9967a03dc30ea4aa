// SPDX-License-Identifier: Apache-2.0
// The official MCP TypeScript SDK (@modelcontextprotocol/sdk, unmodified, pinned in
// package-lock.json) against a real replhost-server: `npm ci` into the build tree, then
// mcp_sdk.test.mjs under `node --test`, over each transport an agent uses: Streamable HTTP, and
// stdio through `replhost-cli mcp`, to a server that runs and to none (the relay starts one). Skipped, saying why,
// when node or npm is missing or node is older than the SDK supports.

#include "nodepackage.h"
#include "serverprocess.h"

#include <QFile>
#include <QJsonArray>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <signal.h>

class tst_McpSdk : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void sdkOverStreamableHttp();
    void sdkOverStdioToARunningServer();
    void sdkOverStdioStartsTheServer();

private:
    // The SDK's stdio transport starting `replhost-cli mcp --data-dir <dataDir>`, as an agent's
    // configuration does. Empty on success, else why the tests failed.
    QString runOverStdio(const QString &dataDir, const QMap<QString, QString> &environment);
    // The server's environment: Debian's Python, which has matplotlib from apt, when there is
    // one (the python3 first on PATH may be another).
    static QMap<QString, QString> serverEnvironment();

    NodePackage m_package{QStringLiteral(REPLHOST_MCP_SDK_SOURCE_DIR),
                          QStringLiteral(REPLHOST_MCP_SDK_INSTALL_DIR)};
};

void tst_McpSdk::initTestCase()
{
    // The SDK declares "engines": {"node": ">=18"}.
    if (const QString reason = NodePackage::unavailableReason(18); !reason.isEmpty())
        QSKIP(qPrintable(reason));
    const QString failure = m_package.install({QStringLiteral("mcp_sdk.test.mjs")},
                                              QStringLiteral("node_modules/@modelcontextprotocol/sdk/package.json"));
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
}

QMap<QString, QString> tst_McpSdk::serverEnvironment()
{
    if (QFileInfo(QStringLiteral("/usr/bin/python3")).isExecutable())
        return {{QStringLiteral("REPLHOST_PYTHON"), QStringLiteral("/usr/bin/python3")}};
    return {};
}

void tst_McpSdk::sdkOverStreamableHttp()
{
    ServerProcess server;
    QVERIFY2(server.start({}, serverEnvironment()), qPrintable(server.error()));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    // The way an agent is pointed at replhost over HTTP: the /mcp URL and the server's token as
    // a bearer token.
    env.insert(QStringLiteral("MCP_TRANSPORT"), QStringLiteral("http"));
    env.insert(QStringLiteral("MCP_URL"), QStringLiteral("http://127.0.0.1:%1/mcp").arg(server.port()));
    env.insert(QStringLiteral("MCP_TOKEN"), QString::fromLatin1(server.token()));
    const NodePackage::Run run = m_package.runTests(QStringLiteral("mcp_sdk.test.mjs"), env, 300000);
    qInfo().noquote() << QString::fromUtf8(run.output);
    QVERIFY2(run.finished, "the SDK tests did not finish within 5 minutes");
    QVERIFY2(run.passed(), "MCP SDK tests failed (output above)");
    QCOMPARE(server.stop(), 0);
}

QString tst_McpSdk::runOverStdio(const QString &dataDir, const QMap<QString, QString> &environment)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (auto it = environment.cbegin(); it != environment.cend(); ++it)
        env.insert(it.key(), it.value());
    env.insert(QStringLiteral("MCP_TRANSPORT"), QStringLiteral("stdio"));
    env.insert(QStringLiteral("MCP_COMMAND"), QStringLiteral(REPLHOST_CLI_EXECUTABLE));
    env.insert(QStringLiteral("MCP_ARGS"), QString::fromUtf8(QJsonDocument(QJsonArray{
            QStringLiteral("mcp"), QStringLiteral("--data-dir"), dataDir}).toJson(QJsonDocument::Compact)));
    const NodePackage::Run run = m_package.runTests(QStringLiteral("mcp_sdk.test.mjs"), env, 300000);
    qInfo().noquote() << QString::fromUtf8(run.output);
    if (!run.finished)
        return QStringLiteral("the SDK tests did not finish within 5 minutes");
    return run.passed() ? QString() : QStringLiteral("MCP SDK tests over stdio failed (output above)");
}

void tst_McpSdk::sdkOverStdioToARunningServer()
{
    ServerProcess server;
    QVERIFY2(server.start({}, serverEnvironment()), qPrintable(server.error()));
    // replhost-cli finds the server through the URL file in its data dir, as it always does.
    const QString failure = runOverStdio(server.dataDir(), {});
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
    QCOMPARE(server.stop(), 0);
}

void tst_McpSdk::sdkOverStdioStartsTheServer()
{
    QTemporaryDir home;
    QVERIFY(home.isValid());
    const QString dataDir = home.filePath(QStringLiteral("data"));
    QMap<QString, QString> environment = serverEnvironment();
    environment.insert(QStringLiteral("REPLHOST_PLUGIN_PATH"), ServerProcess::pluginDir());
    const QString failure = runOverStdio(dataDir, environment);

    // The server replhost-cli started keeps running after the client has gone; stop it.
    QFile urlFile(dataDir + QStringLiteral("/server.json"));
    QVERIFY2(urlFile.open(QIODevice::ReadOnly), "replhost-cli mcp started no server (no server.json)");
    const qint64 pid = QJsonDocument::fromJson(urlFile.readAll()).object().value(QStringLiteral("pid")).toInteger();
    QVERIFY(pid > 0);
    QVERIFY(ServerProcess::isAlive(pid));
    ::kill(pid_t(pid), SIGTERM);
    QTRY_VERIFY_WITH_TIMEOUT(!ServerProcess::isAlive(pid), 20000);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
}

QTEST_GUILESS_MAIN(tst_McpSdk)
#include "tst_mcpsdk.moc"
