// SPDX-License-Identifier: Apache-2.0
// docs/openapi.yaml against the server itself: every route the Router registers is described
// under `paths:`, and every path and method described there is a registered route. The YAML is
// read line by line (no YAML library): the file keeps each path at two spaces and each method
// at four, which this test also enforces.

#include "core/engine.h"
#include "http/apiserver.h"

#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

class tst_OpenApi : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void everyRegisteredRouteIsDocumented();
    void everyDocumentedRouteIsRegistered();
    void documentedRoutesAreUnique();
    void everyOperationHasResponses();

private:
    // "METHOD /path" for every operation under `paths:`, in file order.
    QStringList m_documented;
    QStringList m_registered;
    QStringList m_operationsWithoutResponses;
};

void tst_OpenApi::initTestCase()
{
    QTemporaryDir dataDir;
    QVERIFY(dataDir.isValid());
    replhost::core::EngineConfig config;
    config.dataDir = dataDir.path();
    auto engine = replhost::core::Engine::open(config);
    QVERIFY2(engine.ok(), engine.ok() ? "" : qPrintable(engine.error().message));
    {
        replhost::http::ApiServer server(**engine, {});
        m_registered = server.router().routes();
    }
    QVERIFY(m_registered.size() > 20);

    QFile file(QStringLiteral(REPLHOST_SOURCE_DIR "/docs/openapi.yaml"));
    QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(file.fileName()));
    static const QRegularExpression pathLine(QStringLiteral("^  (/[^:\\s]*):\\s*$"));
    static const QRegularExpression methodLine(
            QStringLiteral("^    (get|put|post|delete|patch|head|options|trace):(\\s+\\*\\w+)?\\s*(&\\w+)?\\s*$"));
    static const QRegularExpression topLevel(QStringLiteral("^[A-Za-z]"));
    bool inPaths = false;
    QString path;
    QString operation;          // the current inline operation, until its responses are seen
    bool operationHasResponses = true;
    int lineNumber = 0;
    for (const QByteArray &raw : file.readAll().split('\n')) {
        ++lineNumber;
        const QString line = QString::fromUtf8(raw);
        if (line == QLatin1String("paths:")) {
            inPaths = true;
            continue;
        }
        if (!inPaths)
            continue;
        if (topLevel.match(line).hasMatch())
            break;  // the next top-level key ends `paths:`
        if (const auto match = pathLine.match(line); match.hasMatch()) {
            path = match.captured(1);
            continue;
        }
        if (line.startsWith(QLatin1String("  /")))
            QFAIL(qPrintable(QStringLiteral("line %1: a path must be written as '  /path:'").arg(lineNumber)));
        if (const auto match = methodLine.match(line); match.hasMatch()) {
            QVERIFY2(!path.isEmpty(), qPrintable(QStringLiteral("line %1: a method before any path").arg(lineNumber)));
            if (!operationHasResponses)
                m_operationsWithoutResponses.append(operation);
            operation = match.captured(1).toUpper() + QLatin1Char(' ') + path;
            m_documented.append(operation);
            // An alias (*name) reuses an operation checked where it was written.
            operationHasResponses = !match.captured(2).isEmpty();
            continue;
        }
        if (line.startsWith(QLatin1String("      responses:")))
            operationHasResponses = true;
    }
    if (!operationHasResponses)
        m_operationsWithoutResponses.append(operation);
    QVERIFY2(inPaths, "no 'paths:' section");
    QVERIFY(m_documented.size() > 20);
}

void tst_OpenApi::everyRegisteredRouteIsDocumented()
{
    const QSet<QString> documented(m_documented.cbegin(), m_documented.cend());
    QStringList missing;
    for (const QString &route : std::as_const(m_registered)) {
        if (!documented.contains(route))
            missing.append(route);
    }
    QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("registered but not in docs/openapi.yaml:\n  ")
                                           + missing.join(QStringLiteral("\n  "))));
}

void tst_OpenApi::everyDocumentedRouteIsRegistered()
{
    const QSet<QString> registered(m_registered.cbegin(), m_registered.cend());
    QStringList extra;
    for (const QString &route : std::as_const(m_documented)) {
        if (!registered.contains(route))
            extra.append(route);
    }
    QVERIFY2(extra.isEmpty(), qPrintable(QStringLiteral("in docs/openapi.yaml but not registered:\n  ")
                                         + extra.join(QStringLiteral("\n  "))));
}

void tst_OpenApi::documentedRoutesAreUnique()
{
    QSet<QString> seen;
    for (const QString &route : std::as_const(m_documented)) {
        QVERIFY2(!seen.contains(route), qPrintable(QStringLiteral("documented twice: ") + route));
        seen.insert(route);
    }
    QCOMPARE(seen.size(), QSet<QString>(m_registered.cbegin(), m_registered.cend()).size());
}

void tst_OpenApi::everyOperationHasResponses()
{
    QVERIFY2(m_operationsWithoutResponses.isEmpty(),
             qPrintable(QStringLiteral("operations without responses: ") + m_operationsWithoutResponses.join(QStringLiteral(", "))));
}

QTEST_GUILESS_MAIN(tst_OpenApi)
#include "tst_openapi.moc"
