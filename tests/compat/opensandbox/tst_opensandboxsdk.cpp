// SPDX-License-Identifier: Apache-2.0
// OpenSandbox's published JavaScript SDK (@alibaba-group/opensandbox, unmodified, pinned in
// package-lock.json) against a real replhost-server: `npm ci` into the build tree, then
// opensandbox_sdk.test.mjs under `node --test`. Skipped, saying why, when node or npm is missing
// or node is older than the SDK supports.

#include "nodepackage.h"
#include "serverprocess.h"
#include "sandboxrequirement.h"

#include <QTest>

class tst_OpenSandboxSdk : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void sdkAgainstTheServer();

private:
    NodePackage m_package{QStringLiteral(REPLHOST_OSB_SDK_SOURCE_DIR),
                          QStringLiteral(REPLHOST_OSB_SDK_INSTALL_DIR)};
};

void tst_OpenSandboxSdk::initTestCase()
{
    // The SDK declares "engines": {"node": ">=20"} (its undici needs 20.18).
    if (const QString reason = NodePackage::unavailableReason(20); !reason.isEmpty())
        QSKIP(qPrintable(reason));
    const QString failure = m_package.install({QStringLiteral("opensandbox_sdk.test.mjs")},
                                              QStringLiteral("node_modules/@alibaba-group/opensandbox/package.json"));
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
}

void tst_OpenSandboxSdk::sdkAgainstTheServer()
{
    ServerProcess server;
    QVERIFY2(server.start(), qPrintable(server.error()));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    // The way a user points the SDK at replhost: a domain with the /opensandbox path and the
    // server's token as the API key.
    env.insert(QStringLiteral("OPEN_SANDBOX_DOMAIN"), QStringLiteral("127.0.0.1:%1/opensandbox").arg(server.port()));
    env.insert(QStringLiteral("OPEN_SANDBOX_API_KEY"), QString::fromLatin1(server.token()));
    // A create means a replhost sandbox; where this machine cannot make one, the suite asks for
    // plain directories knowingly (and a machine that must make them fails instead).
    const QString noSandbox = replhost::testing::sandboxUnavailableReason();
    if (!noSandbox.isEmpty()) {
        if (replhost::testing::sandboxRequired())
            QFAIL(qPrintable(QStringLiteral("REPLHOST_REQUIRE_SANDBOX=1, and ") + noSandbox));
        qInfo().noquote() << "no sandboxes here (" << noSandbox << "): the SDK's sandboxes are plain directories";
        env.insert(QStringLiteral("REPLHOST_OSB_ISOLATION"), QStringLiteral("none"));
    }
    const NodePackage::Run run = m_package.runTests(QStringLiteral("opensandbox_sdk.test.mjs"), env, 300000);
    qInfo().noquote() << QString::fromUtf8(run.output);
    QVERIFY2(run.finished, "the SDK tests did not finish within 5 minutes");
    QVERIFY2(run.passed(), "OpenSandbox SDK tests failed (output above)");
    QCOMPARE(server.stop(), 0);
}

QTEST_GUILESS_MAIN(tst_OpenSandboxSdk)
#include "tst_opensandboxsdk.moc"
