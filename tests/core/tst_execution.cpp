// SPDX-License-Identifier: Apache-2.0
#include "core/contextmanager.h"
#include "core/execution.h"

#include <QPointer>
#include <QTest>

#include <memory>

using replhost::core::Execution;
using replhost::core::ExecutionPtr;
using replhost::sdk::Event;

namespace {

ExecutionPtr makeExecution()
{
    return ExecutionPtr(new Execution(QStringLiteral("e1"), QStringLiteral("default"),
                                      QStringLiteral("c1"), QStringLiteral("python"),
                                      QStringLiteral("x = 1")),
                        &Execution::dispose);
}

} // namespace

class tst_Execution : public QObject {
    Q_OBJECT

private slots:
    void lastReferenceDeletesAtOnce()
    {
        ExecutionPtr execution = makeExecution();
        const QPointer<Execution> watch(execution.get());
        execution.reset();
        QVERIFY(watch.isNull());  // without a turn of the event loop
    }

    void lastReferenceInsideItsOwnSignalDeletesLater_data()
    {
        QTest::addColumn<bool>("inFinished");
        QTest::newRow("eventAdded") << false;
        QTest::newRow("finished") << true;
    }

    void lastReferenceInsideItsOwnSignalDeletesLater()
    {
        QFETCH(bool, inFinished);
        ExecutionPtr execution = makeExecution();
        const QPointer<Execution> watch(execution.get());
        Execution *raw = execution.get();
        // The subscriber holds the only reference and drops it from the slot.
        auto held = std::make_shared<ExecutionPtr>(std::move(execution));
        const auto drop = [held] { held->reset(); };
        if (inFinished)
            QObject::connect(raw, &Execution::finished, raw, drop);
        else
            QObject::connect(raw, &Execution::eventAdded, raw, drop);
        raw->addEvent(Event::done(QStringLiteral("e1"), QStringLiteral("ok")));
        QVERIFY(!watch.isNull());  // still alive after its emission returned
        QCOMPARE(raw->status(), QStringLiteral("ok"));
        QTRY_VERIFY(watch.isNull());  // deleted by the event loop
    }
};

QTEST_GUILESS_MAIN(tst_Execution)
#include "tst_execution.moc"
