// SPDX-License-Identifier: Apache-2.0
#include "http/errorstatus.h"
#include "http/jsonbody.h"
#include "http/router.h"
#include "http/securitygate.h"

#include <QTest>

using namespace replhost::http;

class tst_SecurityGate : public QObject {
    Q_OBJECT

private slots:
    void hosts_data();
    void hosts();
    void origins_data();
    void origins();
    void tokens_data();
    void tokens();
    void errorCodesMapToStatuses();
    void routerMatchesAndDecodesParameters();
    void routerReportsAllowedMethods();
    void jsonBodyNamesTheField();

private:
    static SecurityGate gate()
    {
        SecurityGate g("s3cret-token-0123456789", {QStringLiteral("Build.Box")},
                       {QStringLiteral("http://localhost:3000/"), QStringLiteral("https://app.example")});
        g.setEndpoint(QHostAddress(QStringLiteral("127.0.0.1")), 49999);
        return g;
    }
};

void tst_SecurityGate::hosts_data()
{
    QTest::addColumn<QByteArray>("host");
    QTest::addColumn<bool>("allowed");
    QTest::newRow("localhost") << QByteArray("localhost") << true;
    QTest::newRow("localhost:port") << QByteArray("localhost:49999") << true;
    QTest::newRow("any port") << QByteArray("127.0.0.1:1") << true;
    QTest::newRow("v6") << QByteArray("[::1]:49999") << true;
    QTest::newRow("extra, case") << QByteArray("build.box:80") << true;
    QTest::newRow("trailing dot") << QByteArray("localhost.:49999") << true;
    QTest::newRow("rebinding") << QByteArray("attacker.example:49999") << false;
    QTest::newRow("suffix") << QByteArray("localhost.attacker.example") << false;
    QTest::newRow("other loopback") << QByteArray("127.0.0.2") << false;
    QTest::newRow("bad port") << QByteArray("localhost:http") << false;
    QTest::newRow("userinfo") << QByteArray("localhost@attacker.example") << false;
    QTest::newRow("empty") << QByteArray("") << false;
    // Plain local names are accepted without the general rules; the edges must read the same.
    QTest::newRow("v6 without port") << QByteArray("[::1]") << true;
    QTest::newRow("highest port") << QByteArray("127.0.0.1:65535") << true;
    QTest::newRow("port out of range") << QByteArray("127.0.0.1:65536") << false;
    QTest::newRow("empty port") << QByteArray("localhost:") << true;
    QTest::newRow("upper case") << QByteArray("LOCALHOST:80") << true;
    QTest::newRow("longer name") << QByteArray("127.0.0.10:80") << false;
    QTest::newRow("two ports") << QByteArray("localhost:80:80") << false;
    QTest::newRow("v6 suffix") << QByteArray("[::1]x") << false;
}

void tst_SecurityGate::hosts()
{
    QFETCH(QByteArray, host);
    QFETCH(bool, allowed);
    const auto result = gate().checkHost(host);
    QCOMPARE(result.ok(), allowed);
    if (!allowed)
        QCOMPARE(ErrorStatus::forCode(result.error().code), host.isEmpty() ? 400 : 403);
}

void tst_SecurityGate::origins_data()
{
    QTest::addColumn<QByteArray>("origin");
    QTest::addColumn<bool>("allowed");
    QTest::newRow("none") << QByteArray() << true;
    QTest::newRow("own localhost") << QByteArray("http://localhost:49999") << true;
    QTest::newRow("own 127") << QByteArray("http://127.0.0.1:49999") << true;
    QTest::newRow("own v6") << QByteArray("http://[::1]:49999") << true;
    QTest::newRow("configured") << QByteArray("http://localhost:3000") << true;
    QTest::newRow("configured, default port") << QByteArray("https://app.example:443") << true;
    QTest::newRow("other port") << QByteArray("http://localhost:3001") << false;
    QTest::newRow("https own") << QByteArray("https://localhost:49999") << false;
    QTest::newRow("null") << QByteArray("null") << false;
    QTest::newRow("page") << QByteArray("https://attacker.example") << false;
    QTest::newRow("with path") << QByteArray("http://localhost:3000/x") << false;
}

void tst_SecurityGate::origins()
{
    QFETCH(QByteArray, origin);
    QFETCH(bool, allowed);
    QCOMPARE(gate().checkOrigin(origin).ok(), allowed);
}

void tst_SecurityGate::tokens_data()
{
    QTest::addColumn<QByteArray>("authorization");
    QTest::addColumn<bool>("allowed");
    QTest::newRow("right") << QByteArray("Bearer s3cret-token-0123456789") << true;
    QTest::newRow("scheme case") << QByteArray("BEARER s3cret-token-0123456789") << true;
    QTest::newRow("extra spaces") << QByteArray("Bearer   s3cret-token-0123456789  ") << true;
    QTest::newRow("missing") << QByteArray() << false;
    QTest::newRow("no scheme") << QByteArray("s3cret-token-0123456789") << false;
    QTest::newRow("basic") << QByteArray("Basic s3cret-token-0123456789") << false;
    QTest::newRow("prefix") << QByteArray("Bearer s3cret-token-012345678") << false;
    QTest::newRow("longer") << QByteArray("Bearer s3cret-token-01234567890") << false;
    // The comparison runs over the bytes sent, the token repeated under them: a repetition of
    // the token matches every byte and must still be refused for its length.
    QTest::newRow("token twice") << QByteArray("Bearer s3cret-token-0123456789s3cret-token-0123456789") << false;
    QTest::newRow("last byte differs") << QByteArray("Bearer s3cret-token-0123456788") << false;
    QTest::newRow("empty token") << QByteArray("Bearer ") << false;
}

void tst_SecurityGate::tokens()
{
    QFETCH(QByteArray, authorization);
    QFETCH(bool, allowed);
    const auto result = gate().checkToken(authorization);
    QCOMPARE(result.ok(), allowed);
    if (!allowed)
        QCOMPARE(ErrorStatus::forCode(result.error().code), 401);
}

void tst_SecurityGate::errorCodesMapToStatuses()
{
    QCOMPARE(ErrorStatus::forCode(QStringLiteral("bad_request")), 400);
    QCOMPARE(ErrorStatus::forCode(QStringLiteral("unknown_language")), 400);
    QCOMPARE(ErrorStatus::forCode(QStringLiteral("not_found")), 404);
    QCOMPARE(ErrorStatus::forCode(QStringLiteral("conflict")), 409);
    QCOMPARE(ErrorStatus::forCode(QStringLiteral("payload_too_large")), 413);
    QCOMPARE(ErrorStatus::forCode(QStringLiteral("unavailable")), 503);
    QCOMPARE(ErrorStatus::forCode(QStringLiteral("storage")), 500);
    QCOMPARE(ErrorStatus::forCode(QStringLiteral("something new")), 500);
}

void tst_SecurityGate::routerMatchesAndDecodesParameters()
{
    Router router;
    int hits = 0;
    router.add("GET", QStringLiteral("/v1/workspaces/{ws}/contexts/{id}"), [&hits](const auto &) { ++hits; });
    const Router::Match match = router.match("GET", QStringLiteral("/v1/workspaces/my%20ws/contexts/abc/"));
    QCOMPARE(match.kind, Router::Match::Kind::Found);
    QCOMPARE(match.params.value(QStringLiteral("ws")), QStringLiteral("my ws"));
    QCOMPARE(match.params.value(QStringLiteral("id")), QStringLiteral("abc"));
    QCOMPARE(router.match("GET", QStringLiteral("/v1/workspaces//contexts/abc")).kind, Router::Match::Kind::NotFound);
    QCOMPARE(router.match("GET", QStringLiteral("/v1/workspaces/a/contexts")).kind, Router::Match::Kind::NotFound);
}

void tst_SecurityGate::routerReportsAllowedMethods()
{
    Router router;
    router.add("GET", QStringLiteral("/v1/env"), [](const auto &) {});
    router.add("PATCH", QStringLiteral("/v1/env"), [](const auto &) {});
    const Router::Match match = router.match("DELETE", QStringLiteral("/v1/env"));
    QCOMPARE(match.kind, Router::Match::Kind::MethodNotAllowed);
    QCOMPARE(match.allowedMethods, (QByteArrayList{"GET", "PATCH"}));
}

void tst_SecurityGate::jsonBodyNamesTheField()
{
    const auto body = JsonBody::parse(R"({"code": 1, "env": {"A": "1", "B": null}, "cwd": null, "timeout_ms": 2.0})");
    QVERIFY(body.ok());
    QVERIFY(body->requiredString(QStringLiteral("code")).error().message.contains(QStringLiteral("'code'")));
    QVERIFY(body->stringMap(QStringLiteral("env")).error().message.contains(QStringLiteral("'B'")));
    QCOMPARE(body->optionalString(QStringLiteral("cwd")).value(), QString());
    QCOMPARE(body->optionalInt(QStringLiteral("timeout_ms"), 0, 0, 10).value(), 2);
    QVERIFY(!JsonBody::parse("[]").ok());
    QVERIFY(JsonBody::parse("", true).ok());
    QVERIFY(!JsonBody::parse("").ok());
}

QTEST_GUILESS_MAIN(tst_SecurityGate)
#include "tst_securitygate.moc"
