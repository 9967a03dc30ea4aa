// SPDX-License-Identifier: Apache-2.0
// What only the workbench's HTTP engine has to do: a run whose stream breaks while the run goes
// on is resumed where it broke, so the run ends in the window with all its output and nothing
// is reported lost. A real replhost-server on 127.0.0.1, reached through a relay the test can
// cut (every connection at once, as a network that drops them would).
#include "serverprocess.h"

#include "gui/httpengine.h"

#include <QDir>
#include <QPointer>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <optional>

using namespace replhost;
using namespace replhost::gui;

namespace {

constexpr int kTimeout = 60000;

// Relays every connection made to it to 127.0.0.1:`target`, byte for byte, until cut().
class Relay : public QObject {
public:
    explicit Relay(quint16 target) : m_target(target)
    {
        connect(&m_listener, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *client = m_listener.nextPendingConnection()) {
                auto *server = new QTcpSocket(client);
                server->connectToHost(QHostAddress::LocalHost, m_target);
                connect(client, &QTcpSocket::readyRead, server, [client, server] { server->write(client->readAll()); });
                connect(server, &QTcpSocket::readyRead, client, [client, server] { client->write(server->readAll()); });
                connect(client, &QTcpSocket::disconnected, client, &QObject::deleteLater);
                connect(server, &QTcpSocket::disconnected, client, &QTcpSocket::disconnectFromHost);
                m_clients.append(client);
            }
        });
        m_listener.listen(QHostAddress::LocalHost, 0);
    }
    quint16 port() const { return m_listener.serverPort(); }
    // Drops every connection relayed so far, in the middle of whatever it carries.
    void cut()
    {
        for (const QPointer<QTcpSocket> &client : std::exchange(m_clients, {})) {
            if (client)
                client->abort();
        }
    }

private:
    quint16 m_target;
    QTcpServer m_listener;
    QList<QPointer<QTcpSocket>> m_clients;
};

QString streamText(const core::ExecutionPtr &execution)
{
    QString text;
    for (const sdk::Event &event : execution->events()) {
        if (event.kind == sdk::Event::Kind::Stream)
            text += event.fields.value(QLatin1String("text")).toString();
    }
    return text;
}

} // namespace

class tst_HttpEngine : public QObject {
    Q_OBJECT
private slots:
    void aBrokenRunStreamIsResumedWhereItBroke();
};

void tst_HttpEngine::aBrokenRunStreamIsResumedWhereItBroke()
{
    ServerProcess server;
    QVERIFY2(server.start({QStringLiteral("--warm-pool"), QStringLiteral("0")}), qPrintable(server.error()));
    Relay relay(server.port());
    QVERIFY(relay.port() != 0);
    ServerEndpoint endpoint;
    endpoint.url = QUrl(QStringLiteral("http://127.0.0.1:%1").arg(relay.port()));
    endpoint.pid = server.pid();
    endpoint.token = server.token();
    endpoint.holder = QStringLiteral("replhost-server");
    HttpEngine client(endpoint, server.dataDir());
    std::optional<Result<void>> connected;
    client.connectToServer([&connected](Result<void> outcome) { connected = outcome; });
    QVERIFY(QTest::qWaitFor([&] { return connected.has_value(); }, kTimeout));
    QVERIFY2(*connected, connected->ok() ? "" : qPrintable(connected->error().message));
    if (!client.availableLanguages().contains(QStringLiteral("python")))
        QSKIP("python is not available in this build (plugins/python)");
    QSignalSpy lost(&client, &EngineClient::connectionLost);

    core::CreateContextRequest create;
    create.language = QStringLiteral("python");
    std::optional<Result<core::ContextInfo>> context;
    client.createContext(create, [&context](Result<core::ContextInfo> info) { context = info; });
    QVERIFY(QTest::qWaitFor([&] { return context.has_value(); }, kTimeout));
    QVERIFY(*context);

    // The run waits for a file the test writes once the stream has been cut.
    QTemporaryDir gate;
    const QString go = QDir(gate.path()).filePath(QStringLiteral("go"));
    core::RunRequest run;
    run.contextId = (*context)->id;
    run.code = QStringLiteral("import os, time\nprint('before', flush=True)\n"
                              "while not os.path.exists('%1'):\n    time.sleep(0.01)\n"
                              "for i in range(3):\n    print('after', i)\n")
                       .arg(go);
    std::optional<Result<core::ExecutionPtr>> started;
    client.run(run, [&started](Result<core::ExecutionPtr> execution) { started = execution; });
    QVERIFY(QTest::qWaitFor([&] { return started.has_value(); }, kTimeout));
    QVERIFY(*started);
    const core::ExecutionPtr execution = **started;
    QVERIFY(QTest::qWaitFor([&] { return streamText(execution) == QLatin1String("before\n"); }, kTimeout));

    relay.cut();
    QFile file(go);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.close();

    QVERIFY(QTest::qWaitFor([&] { return execution->isFinished(); }, kTimeout));
    QCOMPARE(execution->status(), QStringLiteral("ok"));
    QCOMPARE(streamText(execution), QStringLiteral("before\nafter 0\nafter 1\nafter 2\n"));  // nothing twice
    QCOMPARE(lost.size(), 0);
}

QTEST_MAIN(tst_HttpEngine)
#include "tst_httpengine.moc"
