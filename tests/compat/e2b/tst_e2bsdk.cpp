// SPDX-License-Identifier: Apache-2.0
// E2B's published JavaScript SDK, unmodified, against a real replhost-server: installs the
// version pinned in package-lock.json into the build tree (`npm ci`), then runs
// e2b_sdk.test.mjs with `node --test`, once through the capability path on the main port and
// once through the token-less --e2b-port listener. Skipped, saying why, when node or npm is
// missing or node is older than the SDK supports.

#include "nodepackage.h"
#include "sandboxrequirement.h"
#include "serverprocess.h"

#include "apiclient.h"

#include <QDeadlineTimer>
#include <QJsonArray>
#include <QJsonObject>
#include <QFileInfo>
#include <QMap>
#include <QRegularExpression>
#include <QTest>

class tst_E2bSdk : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void sdkThroughCapabilityPath();
    void sdkThroughE2bListener();
    void sdkInASandboxedE2bWorkspace();

private:
    // Runs the SDK's test script pointed at `sandboxUrl`, the way a user points it.
    void runSdkTests(const QString &sandboxUrl,
                     const QString &script = QStringLiteral("e2b_sdk.test.mjs"));

    NodePackage m_package{QStringLiteral(REPLHOST_E2B_SDK_SOURCE_DIR),
                          QStringLiteral(REPLHOST_E2B_SDK_INSTALL_DIR)};
};

void tst_E2bSdk::initTestCase()
{
    // The SDK declares "engines": {"node": ">=20.18.1 <21 || >=22"}.
    if (const QString reason = NodePackage::unavailableReason(20); !reason.isEmpty())
        QSKIP(qPrintable(reason));
    const QString failure = m_package.install({QStringLiteral("e2b_sdk.test.mjs"),
                                               QStringLiteral("e2b_sandbox.test.mjs")},
                                              QStringLiteral("node_modules/@e2b/code-interpreter/package.json"));
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
}

void tst_E2bSdk::runSdkTests(const QString &sandboxUrl, const QString &script)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("E2B_DEBUG"), QStringLiteral("true"));
    env.insert(QStringLiteral("E2B_SANDBOX_URL"), sandboxUrl);
    env.remove(QStringLiteral("E2B_API_KEY"));
    const NodePackage::Run run = m_package.runTests(script, env, 240000);
    qInfo().noquote() << QString::fromUtf8(run.output);
    QVERIFY2(run.finished, "the SDK tests did not finish within 4 minutes");
    QVERIFY2(run.passed(), "E2B SDK tests failed (output above)");
}

namespace {

// Debian's Python, which has matplotlib and pandas from apt, when there is one (the python3 first
// on PATH may be another).
QMap<QString, QString> serverEnvironment()
{
    QMap<QString, QString> environment;
    if (QFileInfo(QStringLiteral("/usr/bin/python3")).isExecutable())
        environment.insert(QStringLiteral("REPLHOST_PYTHON"), QStringLiteral("/usr/bin/python3"));
    return environment;
}

} // namespace

void tst_E2bSdk::sdkThroughCapabilityPath()
{
    ServerProcess server;
    QVERIFY2(server.start({}, serverEnvironment()), qPrintable(server.error()));
    runSdkTests(QStringLiteral("http://127.0.0.1:%1/e2b/%2").arg(server.port()).arg(QString::fromLatin1(server.token())));
    QCOMPARE(server.stop(), 0);
}

void tst_E2bSdk::sdkThroughE2bListener()
{
    ServerProcess server;
    QVERIFY2(server.start({QStringLiteral("--e2b-port"), QStringLiteral("0")}, serverEnvironment()),
             qPrintable(server.error()));
    static const QRegularExpression e2bLine(QStringLiteral("E2B API without a token at (http://\\S+)"));
    QString url;
    const QDeadlineTimer deadline(10000);
    while (url.isEmpty() && !deadline.hasExpired()) {
        if (const auto match = e2bLine.match(QString::fromUtf8(server.output())); match.hasMatch())
            url = match.captured(1);
        else
            QTest::qWait(20);
    }
    QVERIFY2(!url.isEmpty(), server.output().constData());
    runSdkTests(url);
    QCOMPARE(server.stop(), 0);
}

void tst_E2bSdk::sdkInASandboxedE2bWorkspace()
{
    REPLHOST_REQUIRE_SANDBOX_OR_SKIP(replhost::testing::sandboxUnavailableReason());
    ServerProcess server;
    QVERIFY2(server.start({QStringLiteral("--e2b-workspace"), QStringLiteral("e2b")}, serverEnvironment()),
             qPrintable(server.error()));
    const ApiClient api(server.port(), server.token());
    const QJsonObject settings = api.get(QStringLiteral("/v1/workspaces/e2b")).object()
                                         .value(QStringLiteral("settings")).toObject();
    QCOMPARE(settings.value(QStringLiteral("isolation")).toString(), QStringLiteral("sandbox"));
    QCOMPARE(settings.value(QStringLiteral("view_path")).toString(), QStringLiteral("/home/user"));
    runSdkTests(QStringLiteral("http://127.0.0.1:%1/e2b/%2").arg(server.port()).arg(QString::fromLatin1(server.token())),
                QStringLiteral("e2b_sandbox.test.mjs"));
    // The default workspace is left as it was: the E2B routes served the sandbox.
    QCOMPARE(api.get(QStringLiteral("/v1/contexts")).array().size(), 0);
    QCOMPARE(server.stop(), 0);
}

QTEST_GUILESS_MAIN(tst_E2bSdk)
#include "tst_e2bsdk.moc"
