// SPDX-License-Identifier: Apache-2.0
// The router on its own: which route a method and path reach, the parameters they carry, and the
// answers for a path that exists with other methods or not at all.

#include "http/router.h"

#include <QTest>

using replhost::http::Router;

class tst_Router : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void matches_data();
    void matches();
    void wrongMethodListsTheAllowedOnes();

private:
    Router m_router;
};

void tst_Router::initTestCase()
{
    const Router::Handler none = [](const auto &) {};
    m_router.add("GET", QStringLiteral("/v1/contexts"), none);
    m_router.add("POST", QStringLiteral("/v1/contexts"), none);
    m_router.add("GET", QStringLiteral("/v1/contexts/{id}"), none);
    m_router.add("DELETE", QStringLiteral("/v1/contexts/{id}"), none);
    m_router.add("GET", QStringLiteral("/v1/contexts/{id}/env"), none);
    m_router.add("GET", QStringLiteral("/v1/workspaces/{ws}/contexts/{id}"), none);
    m_router.add("GET", QStringLiteral("/healthz"), none, Router::Access::Public);
}

void tst_Router::matches_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("path");
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("route");  // for Found
    QTest::addColumn<QString>("params"); // "name=value,…" in name order, for Found

    const int found = int(Router::Match::Kind::Found);
    const int notFound = int(Router::Match::Kind::NotFound);
    const int notAllowed = int(Router::Match::Kind::MethodNotAllowed);
    QTest::newRow("literal") << QByteArray("GET") << "/v1/contexts" << found << "GET /v1/contexts" << "";
    QTest::newRow("trailing slash") << QByteArray("POST") << "/v1/contexts/" << found << "POST /v1/contexts" << "";
    QTest::newRow("placeholder") << QByteArray("GET") << "/v1/contexts/abc" << found << "GET /v1/contexts/{id}" << "id=abc";
    QTest::newRow("percent-decoded") << QByteArray("GET") << "/v1/contexts/a%20b%2Fc" << found << "GET /v1/contexts/{id}" << "id=a b/c";
    QTest::newRow("two placeholders") << QByteArray("GET") << "/v1/workspaces/w1/contexts/c1" << found
                                      << "GET /v1/workspaces/{ws}/contexts/{id}" << "id=c1,ws=w1";
    QTest::newRow("deeper literal after placeholder") << QByteArray("GET") << "/v1/contexts/abc/env" << found
                                                      << "GET /v1/contexts/{id}/env" << "id=abc";
    QTest::newRow("public route") << QByteArray("GET") << "/healthz" << found << "GET /healthz" << "";
    QTest::newRow("empty placeholder segment") << QByteArray("GET") << "/v1/contexts//env" << notFound << "" << "";
    QTest::newRow("unknown literal") << QByteArray("GET") << "/v1/contexts/abc/nope" << notFound << "" << "";
    QTest::newRow("too long") << QByteArray("GET") << "/v1/contexts/abc/env/x" << notFound << "" << "";
    QTest::newRow("case matters") << QByteArray("GET") << "/V1/contexts" << notFound << "" << "";
    QTest::newRow("wrong method") << QByteArray("PUT") << "/v1/contexts/abc" << notAllowed << "" << "";
}

void tst_Router::matches()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, path);
    QFETCH(int, kind);
    QFETCH(QString, route);
    QFETCH(QString, params);
    const Router::Match match = m_router.match(method, path);
    QCOMPARE(int(match.kind), kind);
    if (match.kind != Router::Match::Kind::Found) {
        QVERIFY(match.handler == nullptr);
        return;
    }
    QVERIFY(match.handler != nullptr);
    QCOMPARE(match.route, route);
    QStringList names = match.params.keys();
    names.sort();
    QStringList pairs;
    for (const QString &name : names)
        pairs.append(name + QLatin1Char('=') + match.params.value(name));
    QCOMPARE(pairs.join(QLatin1Char(',')), params);
    QCOMPARE(match.access, route == QLatin1String("GET /healthz") ? Router::Access::Public
                                                                  : Router::Access::TokenRequired);
}

void tst_Router::wrongMethodListsTheAllowedOnes()
{
    const Router::Match match = m_router.match("PATCH", QStringLiteral("/v1/contexts/abc"));
    QCOMPARE(match.kind, Router::Match::Kind::MethodNotAllowed);
    QCOMPARE(match.allowedMethods, (QByteArrayList{"GET", "DELETE"}));
    QVERIFY(match.params.isEmpty());
}

QTEST_GUILESS_MAIN(tst_Router)
#include "tst_router.moc"
