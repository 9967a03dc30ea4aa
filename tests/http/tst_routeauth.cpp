// SPDX-License-Identifier: Apache-2.0
// Every route of the native API, one data row each, against a real replhost-server: without a
// token and with a wrong one it answers 401 with the documented error body, except the routes
// docs/openapi.yaml documents as public (`security: []`); and every route documented with a JSON
// request body answers a malformed body with 400. The rows come from the router's own route
// table, so a new route is covered as soon as it is registered; docs/openapi.yaml says which
// routes are public and which take JSON (tst_openapi keeps the two route lists equal).
// The compatible surfaces the same router serves speak their own error vocabularies and are
// left to their own suites.

#include "apiclient.h"
#include "serverprocess.h"

#include "core/engine.h"
#include "http/apiserver.h"

#include <QFile>
#include <QHash>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

namespace {

// What docs/openapi.yaml says about one operation, as far as this test needs it.
struct DocumentedOperation {
    bool isPublic = false;  // `security: []`
    bool takesJson = false; // a requestBody with application/json content
};

// Reads the operations under `paths:`, keyed "METHOD /path". The file keeps paths at two spaces,
// methods at four and an operation's keys at six (tst_openapi enforces the layout); the
// workspace-scoped copies reuse an operation through a YAML alias (`get: *name`).
QHash<QString, DocumentedOperation> readOpenApi(const QString &fileName, QString *error)
{
    QFile file(fileName);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("cannot read ") + fileName;
        return {};
    }
    static const QRegularExpression pathLine(QStringLiteral("^  (/[^:\\s]*):\\s*$"));
    static const QRegularExpression methodLine(
            QStringLiteral("^    (get|put|post|delete|patch|head|options|trace):\\s*(?:([&*])(\\w+))?\\s*$"));
    static const QRegularExpression operationKey(QStringLiteral("^      (\\w+):"));
    QHash<QString, DocumentedOperation> operations;
    QHash<QString, DocumentedOperation> anchors;
    // The `paths:` section: from its key to the next top-level key.
    const QString text = QString::fromUtf8(file.readAll());
    static const QRegularExpression section(QStringLiteral("^paths:\\n(.*?)(?=^[A-Za-z]|\\z)"),
                                            QRegularExpression::MultilineOption
                                                    | QRegularExpression::DotMatchesEverythingOption);
    const auto paths = section.match(text);
    if (!paths.hasMatch()) {
        *error = QStringLiteral("no 'paths:' section in ") + fileName;
        return {};
    }
    QString path, route, anchor, field;  // field: the operation key being read (requestBody, …)
    auto close = [&] {
        if (!anchor.isEmpty())
            anchors.insert(anchor, operations.value(route));
        anchor.clear();
        route.clear();
    };
    for (const QString &line : paths.captured(1).split(QLatin1Char('\n'))) {
        if (const auto match = pathLine.match(line); match.hasMatch()) {
            close();
            path = match.captured(1);
            continue;
        }
        if (const auto match = methodLine.match(line); match.hasMatch()) {
            close();
            const QString key = match.captured(1).toUpper() + QLatin1Char(' ') + path;
            if (match.captured(2) == QLatin1String("*")) {
                if (!anchors.contains(match.captured(3))) {
                    *error = QStringLiteral("%1 uses *%2 before it is defined").arg(key, match.captured(3));
                    return {};
                }
                operations.insert(key, anchors.value(match.captured(3)));
                continue;
            }
            route = key;
            anchor = match.captured(2) == QLatin1String("&") ? match.captured(3) : QString();
            operations.insert(route, {});
            field.clear();
            continue;
        }
        if (route.isEmpty())
            continue;
        if (const auto match = operationKey.match(line); match.hasMatch())
            field = match.captured(1);
        const QString trimmed = line.trimmed();
        if (field == QLatin1String("security") && trimmed == QLatin1String("security: []"))
            operations[route].isPublic = true;
        if (field == QLatin1String("requestBody") && trimmed == QLatin1String("application/json:"))
            operations[route].takesJson = true;
    }
    close();
    if (operations.isEmpty())
        *error = QStringLiteral("no operations under 'paths:' in ") + fileName;
    return operations;
}

// The native API (docs/http-api.md): /v1/… and the two service routes.
bool isNativeRoute(const QString &route)
{
    const QString path = route.section(QLatin1Char(' '), 1);
    return path.startsWith(QLatin1String("/v1/")) || path == QLatin1String("/healthz")
            || path == QLatin1String("/metrics");
}

} // namespace

class tst_RouteAuth : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();

    void everyRouteRefusesMissingOrWrongToken_data();
    void everyRouteRefusesMissingOrWrongToken();
    void publicRoutesAnswerWithoutToken_data();
    void publicRoutesAnswerWithoutToken();
    void malformedJsonBodyIs400_data();
    void malformedJsonBodyIs400();

private:
    // The router's routes that belong to the native API, in registration order.
    QStringList nativeRoutes() const;
    // "METHOD /pattern" → "/concrete/path" with real ids, checked against the router.
    QString concretePath(const QString &route) const;
    void addRouteColumns();

    QTemporaryDir m_routeTableDir;
    std::unique_ptr<replhost::core::Engine> m_routeTableEngine;
    std::unique_ptr<replhost::http::ApiServer> m_routeTable;  // never listens: only its router
    QHash<QString, DocumentedOperation> m_documented;
    QHash<QString, QString> m_parameterValues;
    ServerProcess m_server;
};

void tst_RouteAuth::initTestCase()
{
    replhost::core::EngineConfig config;
    config.dataDir = m_routeTableDir.path();
    auto engine = replhost::core::Engine::open(config);
    QVERIFY2(engine.ok(), engine.ok() ? "" : qPrintable(engine.error().message));
    m_routeTableEngine = std::move(*engine);
    m_routeTable = std::make_unique<replhost::http::ApiServer>(*m_routeTableEngine,
                                                               replhost::http::ApiServerConfig{});
    QVERIFY(m_routeTable->router().routes().size() > 20);

    QString error;
    m_documented = readOpenApi(QStringLiteral(REPLHOST_SOURCE_DIR "/docs/openapi.yaml"), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));

    // Real objects behind every path parameter, so a route that looks its object up before it
    // reads the body still reaches the body.
    QVERIFY2(m_server.start({QStringLiteral("--plugin-path"), QStringLiteral(REPLHOST_TEST_FIXTURE_PLUGIN_DIR)}),
             qPrintable(m_server.error()));
    const ApiClient client(m_server.port(), m_server.token());
    const QString context = client.createContext(QStringLiteral("plain"));
    QVERIFY(!context.isEmpty());
    QVERIFY(client.waitForContextState(context, QStringLiteral("idle")));
    const QString execution =
            client.runAndWait(context, QStringLiteral("1")).value(QStringLiteral("id")).toString();
    QVERIFY(!execution.isEmpty());
    const auto command = client.post(QStringLiteral("/v1/commands?wait=true"),
                                     {{QStringLiteral("command"), QStringLiteral("true")}});
    QCOMPARE(command.status, 200);
    m_parameterValues = {{QStringLiteral("ws"), QStringLiteral("default")},
                         {QStringLiteral("id"), context},
                         {QStringLiteral("eid"), execution},
                         {QStringLiteral("cid"), command.object().value(QStringLiteral("id")).toString()}};
}

void tst_RouteAuth::cleanupTestCase()
{
    QCOMPARE(m_server.stop(), 0);
}

QStringList tst_RouteAuth::nativeRoutes() const
{
    QStringList routes = m_routeTable->router().routes();
    routes.removeIf([](const QString &route) { return !isNativeRoute(route); });
    return routes;
}

QString tst_RouteAuth::concretePath(const QString &route) const
{
    const qsizetype space = route.indexOf(QLatin1Char(' '));
    const QByteArray method = route.left(space).toLatin1();
    QStringList segments = route.mid(space + 1).split(QLatin1Char('/'));
    for (QString &segment : segments) {
        if (segment.startsWith(QLatin1Char('{')) && segment.endsWith(QLatin1Char('}'))) {
            // A parameter this test has no object for still gets a value: the token is checked
            // before any lookup.
            const QString name = segment.mid(1, segment.size() - 2);
            segment = QString::fromLatin1(
                    QUrl::toPercentEncoding(m_parameterValues.value(name, QStringLiteral("unknown-") + name)));
        }
    }
    const QString path = segments.join(QLatin1Char('/'));
    // Unknown paths answer 401 too, so a row is only worth something if its path is the route.
    const auto match = m_routeTable->router().match(method, path);
    if (match.kind != replhost::http::Router::Match::Kind::Found || match.route != route) {
        qWarning() << "the path" << path << "does not reach" << route << "but" << match.route;
        return {};
    }
    return path;
}

void tst_RouteAuth::addRouteColumns()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("path");
}

void tst_RouteAuth::everyRouteRefusesMissingOrWrongToken_data()
{
    addRouteColumns();
    QTest::addColumn<QByteArray>("authorization");  // empty: no Authorization header
    // As long as the real token and different in its last character only, so the comparison
    // has to read all of it.
    QByteArray wrong = m_server.token();
    QVERIFY(!wrong.isEmpty());
    wrong.back() = wrong.back() == '0' ? '1' : '0';
    int rows = 0;
    for (const QString &route : nativeRoutes()) {
        if (m_documented.value(route).isPublic)
            continue;
        const QString path = concretePath(route);
        QVERIFY2(!path.isEmpty(), qPrintable(route));
        const QByteArray method = route.section(QLatin1Char(' '), 0, 0).toLatin1();
        QTest::addRow("%s, no token", qPrintable(route)) << method << path << QByteArray();
        QTest::addRow("%s, wrong token", qPrintable(route)) << method << path << "Bearer " + wrong;
        ++rows;
    }
    QVERIFY(rows > 20);
}

void tst_RouteAuth::everyRouteRefusesMissingOrWrongToken()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, path);
    QFETCH(QByteArray, authorization);
    Headers headers;
    if (!authorization.isEmpty())
        headers.append({"Authorization", authorization});
    // A well-formed body, so only the token can be the reason for the refusal.
    const QByteArray body = method == "GET" || method == "DELETE" ? QByteArray() : QByteArray("{}");
    const ApiClient client(m_server.port(), m_server.token());
    const auto response = client.request(method, path, body, headers, false);
    QCOMPARE(response.status, 401);
    QCOMPARE(response.header("WWW-Authenticate"), QByteArray("Bearer"));
    QVERIFY(response.header("Content-Type").startsWith("application/json"));
    // docs/http-api.md §4: exactly {"code", "message"}.
    const QJsonObject error = QJsonDocument::fromJson(response.body).object();
    QCOMPARE(error.keys(), (QStringList{QStringLiteral("code"), QStringLiteral("message")}));
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("unauthorized"));
    QVERIFY(!error.value(QStringLiteral("message")).toString().isEmpty());
}

void tst_RouteAuth::publicRoutesAnswerWithoutToken_data()
{
    addRouteColumns();
    for (const QString &route : nativeRoutes()) {
        if (!m_documented.value(route).isPublic)
            continue;
        const QString path = concretePath(route);
        QVERIFY2(!path.isEmpty(), qPrintable(route));
        QTest::addRow("%s", qPrintable(route)) << route.section(QLatin1Char(' '), 0, 0).toLatin1() << path;
    }
}

void tst_RouteAuth::publicRoutesAnswerWithoutToken()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, path);
    const ApiClient client(m_server.port(), m_server.token());
    for (const Headers &headers : {Headers{}, Headers{{"Authorization", "Bearer wrong"}}}) {
        const auto response = client.request(method, path, {}, headers, false);
        QVERIFY2(response.status >= 200 && response.status < 300,
                 qPrintable(QString::number(response.status) + QLatin1Char(' ') + QString::fromUtf8(response.body)));
    }
}

void tst_RouteAuth::malformedJsonBodyIs400_data()
{
    addRouteColumns();
    QTest::addColumn<QByteArray>("body");
    int routes = 0;
    for (const QString &route : nativeRoutes()) {
        if (!m_documented.value(route).takesJson)
            continue;
        const QString path = concretePath(route);
        QVERIFY2(!path.isEmpty(), qPrintable(route));
        const QByteArray method = route.section(QLatin1Char(' '), 0, 0).toLatin1();
        QTest::addRow("%s, cut short", qPrintable(route)) << method << path << QByteArray(R"({"code": )");
        QTest::addRow("%s, not an object", qPrintable(route)) << method << path << QByteArray("[1, 2]");
        ++routes;
    }
    QVERIFY2(routes >= 10, "docs/openapi.yaml should document the JSON bodies of at least ten routes");
}

void tst_RouteAuth::malformedJsonBodyIs400()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, path);
    QFETCH(QByteArray, body);
    const ApiClient client(m_server.port(), m_server.token());
    const auto response = client.request(method, path, body, {{"Content-Type", "application/json"}});
    QVERIFY2(response.status == 400, qPrintable(QString::number(response.status) + QLatin1Char(' ')
                                                + QString::fromUtf8(response.body)));
    const QJsonObject error = QJsonDocument::fromJson(response.body).object();
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("bad_request"));
    QVERIFY2(error.value(QStringLiteral("message")).toString().contains(QStringLiteral("JSON")),
             response.body.constData());
}

QTEST_GUILESS_MAIN(tst_RouteAuth)
#include "tst_routeauth.moc"
