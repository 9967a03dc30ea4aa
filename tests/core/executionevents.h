// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the engine suites read off an Execution's events, and VERIFY_EXEC, which explains a
// failed check with those events.

#include "core/contextmanager.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>
#include <QTest>

namespace replhost::core::testing {

// Every event of the execution: those that left its memory (past its window of recent events)
// are read back from the history.
inline QList<sdk::Event> allEvents(const ExecutionPtr &execution)
{
    auto all = execution->eventRange();
    if (!all) {
        qWarning("cannot read the events of %s back: %s", qPrintable(execution->id()),
                 qPrintable(all.error().message));
        return execution->events();
    }
    return *all;
}

inline QList<sdk::Event> eventsOfType(const ExecutionPtr &execution, const QString &type)
{
    QList<sdk::Event> found;
    for (const sdk::Event &event : allEvents(execution)) {
        if (event.type == type)
            found.append(event);
    }
    return found;
}

inline bool hasEvent(const ExecutionPtr &execution, const QString &type)
{
    return !eventsOfType(execution, type).isEmpty();
}

// The fields of the first event of `type`; empty when there is none.
inline QJsonObject eventFields(const ExecutionPtr &execution, const QString &type)
{
    const QList<sdk::Event> found = eventsOfType(execution, type);
    return found.isEmpty() ? QJsonObject() : found.first().fields;
}

inline QString streamText(const ExecutionPtr &execution, const QString &name)
{
    QString text;
    for (const sdk::Event &event : eventsOfType(execution, QStringLiteral("stream"))) {
        if (event.fields.value(QLatin1String("name")).toString() == name)
            text += event.fields.value(QLatin1String("text")).toString();
    }
    return text;
}

// The text/plain of the run's (first) result; empty when it has none.
inline QString resultText(const ExecutionPtr &execution)
{
    return eventFields(execution, QStringLiteral("result"))
            .value(QLatin1String("data")).toObject()
            .value(QLatin1String("text/plain")).toString();
}

inline QString out(const ExecutionPtr &execution) { return streamText(execution, QStringLiteral("stdout")); }
inline QString err(const ExecutionPtr &execution) { return streamText(execution, QStringLiteral("stderr")); }

// The fields of the Done event (empty while the execution is not finished).
inline QJsonObject doneOf(const ExecutionPtr &execution)
{
    if (execution->events().isEmpty() || execution->events().last().kind != sdk::Event::Kind::Done)
        return {};
    return execution->events().last().fields;
}

// The execution as text, for failure messages; long event lists are cut in the middle.
inline QString describe(const ExecutionPtr &execution)
{
    if (!execution)
        return QStringLiteral("(no execution)");
    QStringList lines{QStringLiteral("execution %1 in %2, status \"%3\", %4 events:")
                          .arg(execution->id(), execution->language(), execution->status())
                          .arg(execution->events().size())};
    const auto &events = execution->events();
    for (qsizetype i = 0; i < events.size(); ++i) {
        if (events.size() > 40 && i == 20) {
            lines.append(QStringLiteral("  ... %1 more ...").arg(events.size() - 40));
            i = events.size() - 20;
        }
        QByteArray json = QJsonDocument(events.at(i).toJson()).toJson(QJsonDocument::Compact);
        if (json.size() > 400)
            json = json.left(400) + "...";
        lines.append(QStringLiteral("  %1: %2").arg(i).arg(QString::fromUtf8(json)));
    }
    return lines.join(QLatin1Char('\n'));
}

// Submits a run; null, and a warning naming why, when the engine refuses it.
inline ExecutionPtr startRun(ContextManager &contexts, const RunRequest &request)
{
    auto execution = contexts.run(request);
    if (!execution) {
        qWarning("run refused: %s: %s", qPrintable(execution.error().code),
                 qPrintable(execution.error().message));
        return nullptr;
    }
    return *execution;
}

// `execution` once it has ended; null, and a warning with its events, when it has not ended
// within `timeoutMs`.
inline ExecutionPtr waitForEnd(const ExecutionPtr &execution, int timeoutMs)
{
    if (execution && !QTest::qWaitFor([&] { return execution->isFinished(); }, timeoutMs)) {
        qWarning("the run did not finish: %s", qPrintable(describe(execution)));
        return nullptr;
    }
    return execution;
}

} // namespace replhost::core::testing

// QVERIFY with the execution's events as the explanation, built only when the check fails.
#define VERIFY_EXEC(condition, execution)                                                        \
    do {                                                                                         \
        if (!(condition))                                                                        \
            QVERIFY2(condition, qPrintable(::replhost::core::testing::describe(execution)));     \
    } while (false)
