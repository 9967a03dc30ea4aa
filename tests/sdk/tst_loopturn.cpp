// SPDX-License-Identifier: Apache-2.0
#include "loopturn.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QTest>
#include <QTimer>

#include <functional>

using replhost::sdk::LoopTurn;

namespace {

class Callback : public LoopTurn::Client {
public:
    explicit Callback(std::function<void()> action = {}) : m_action(std::move(action)) {}
    void onLoopTurn() override
    {
        ++calls;
        if (m_action)
            m_action();
    }
    int calls = 0;

private:
    std::function<void()> m_action;
};

// One turn of a loop that waits: it quits from a zero timer, so it passes aboutToBlock once.
void turnOnce()
{
    QEventLoop loop;
    QTimer::singleShot(0, &loop, &QEventLoop::quit);
    loop.exec();
}

} // namespace

class tst_LoopTurn : public QObject {
    Q_OBJECT

private slots:
    void callsBackAtTheNextTurnOnce()
    {
        LoopTurn *turn = LoopTurn::current();
        QVERIFY(turn);
        QCOMPARE(LoopTurn::current(), turn);
        Callback client;
        turn->schedule(&client);
        turn->schedule(&client);  // already waiting: still one call
        QCOMPARE(client.calls, 0);  // never from inside schedule()
        turnOnce();
        QCOMPARE(client.calls, 1);
        turnOnce();
        QCOMPARE(client.calls, 1);
    }

    void cancelledClientIsNotCalled()
    {
        Callback client;
        LoopTurn::current()->schedule(&client);
        LoopTurn::current()->cancel(&client);
        turnOnce();
        QCOMPARE(client.calls, 0);
    }

    void callbackMayCancelTheOthers()
    {
        Callback second;
        Callback first([&second] { LoopTurn::current()->cancel(&second); });
        LoopTurn::current()->schedule(&first);
        LoopTurn::current()->schedule(&second);
        turnOnce();
        QCOMPARE(first.calls, 1);
        QCOMPARE(second.calls, 0);
    }

    void scheduledFromACallbackWaitsForTheNextTurn()
    {
        Callback later;
        Callback first([&later] { LoopTurn::current()->schedule(&later); });
        LoopTurn::current()->schedule(&first);
        QCoreApplication::processEvents();  // one turn that does not wait: awake
        QCOMPARE(first.calls, 1);
        QCOMPARE(later.calls, 0);
        turnOnce();
        QCOMPARE(later.calls, 1);
    }
};

QTEST_GUILESS_MAIN(tst_LoopTurn)
#include "tst_loopturn.moc"
