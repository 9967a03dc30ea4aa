// SPDX-License-Identifier: Apache-2.0
#include "replay.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

namespace replhost::core {

using sdk::Event;

sdk::Event RestoreReport::toEvent(const QString &executionId) const
{
    return Event::other(executionId, QStringLiteral("restored"), toJson());
}

QJsonObject RestoreReport::toJson() const
{
    QJsonObject fields{
        {QStringLiteral("mode"), fromSnapshot ? QStringLiteral("snapshot") : QStringLiteral("replay")},
        {QStringLiteral("lost"), QJsonArray::fromStringList(lost)},
        {QStringLiteral("replayed"), replayed},
        {QStringLiteral("total"), total},
        {QStringLiteral("duration_ms"), durationMs},
        {QStringLiteral("complete"), outcome == Outcome::Complete},
    };
    if (outcome == Outcome::OverBound || outcome == Outcome::HistoryPruned) {
        fields.insert(QStringLiteral("state_lost"), true);
        fields.insert(QStringLiteral("reason"), reason);
        if (!limit.isEmpty()) {
            fields.insert(QStringLiteral("limit"), limit);
            fields.insert(QStringLiteral("limit_value"), limitValue);
        }
    } else if (outcome != Outcome::Complete) {
        QJsonObject failed{{QStringLiteral("ename"), ename}, {QStringLiteral("evalue"), evalue}};
        if (!failedExecutionId.isEmpty()) {
            failed.insert(QStringLiteral("id"), failedExecutionId);
            failed.insert(QStringLiteral("execution_count"), failedExecutionCount);
        }
        fields.insert(QStringLiteral("failed_execution"), failed);
    }
    if (outcome == Outcome::InterpreterLost)
        fields.insert(QStringLiteral("interpreter_lost"), true);
    if (fromSnapshot)
        fields.insert(QStringLiteral("snapshot_execution_count"), snapshotExecutionCount);
    if (!snapshotError.isEmpty())
        fields.insert(QStringLiteral("snapshot_error"), snapshotError);
    return fields;
}

std::optional<RestoreReport> Replay::exceedsBounds(const QList<storage::ExecutionRecord> &executions,
                                                   const WorkspaceSettings::Restore &bounds)
{
    RestoreReport report;
    report.outcome = RestoreReport::Outcome::OverBound;
    report.total = int(executions.size());
    if (bounds.maxReplayCells > 0 && executions.size() > bounds.maxReplayCells) {
        report.limit = QStringLiteral("restore.max_replay_cells");
        report.limitValue = bounds.maxReplayCells;
        report.reason = QStringLiteral("restoring this context would replay %1 executions, more "
                                       "than the workspace's restore.max_replay_cells (%2); it "
                                       "was started afresh")
                                .arg(executions.size())
                                .arg(bounds.maxReplayCells);
        return report;
    }
    qint64 totalMs = 0;
    for (const storage::ExecutionRecord &execution : executions)
        totalMs += std::max<qint64>(0, execution.durationMs);
    if (bounds.maxReplaySeconds > 0 && totalMs > bounds.maxReplaySeconds * 1000) {
        report.limit = QStringLiteral("restore.max_replay_seconds");
        report.limitValue = bounds.maxReplaySeconds;
        report.reason = QStringLiteral("restoring this context would replay %1 executions that "
                                       "took %2 s when they ran, more than the workspace's "
                                       "restore.max_replay_seconds (%3 s); it was started afresh")
                                .arg(executions.size())
                                .arg(double(totalMs) / 1000.0, 0, 'f', 1)
                                .arg(bounds.maxReplaySeconds);
        return report;
    }
    return std::nullopt;
}

Replay::Replay(QList<storage::ExecutionRecord> executions)
    : m_executions(std::move(executions))
{
    m_report.total = int(m_executions.size());
    m_over = m_executions.isEmpty();
}

std::optional<sdk::ExecuteRequest> Replay::next()
{
    if (m_over || !m_inFlight.isEmpty())
        return std::nullopt;
    const storage::ExecutionRecord &execution = m_executions.at(m_next);
    sdk::ExecuteRequest request;
    // Not the execution's own id: that one belongs to a finished execution clients may look up.
    request.id = QStringLiteral("replay-") + execution.id;
    request.code = execution.code;
    request.executionCount = execution.executionCount;
    // Only a run that was answered may ask again; the rest find the end of input at once, as
    // they did when they ran.
    m_answers = QJsonDocument::fromJson(execution.inputs.toUtf8()).array();
    m_asked = 0;
    request.allowInput = !m_answers.isEmpty();
    m_inFlight = request.id;
    m_ename.clear();
    m_evalue.clear();
    return request;
}

bool Replay::owns(const sdk::Event &event) const
{
    return !m_inFlight.isEmpty() && event.executionId == m_inFlight;
}

Replay::Answer Replay::answer(const sdk::Event &inputRequest)
{
    const qsizetype index = m_asked++;
    if (inputRequest.fields.value(QLatin1String("password")).toBool() || index >= m_answers.size())
        return {};
    const QJsonValue value = m_answers.at(index).toObject().value(QLatin1String("value"));
    if (!value.isString())
        return {};
    return {value.toString(), false};
}

bool Replay::take(const sdk::Event &event)
{
    if (event.kind == Event::Kind::Error && m_ename.isEmpty()) {
        m_ename = event.fields.value(QLatin1String("ename")).toString();
        m_evalue = event.fields.value(QLatin1String("evalue")).toString();
        return false;
    }
    if (event.kind != Event::Kind::Done)
        return false;  // output of a replayed execution is dropped

    const QString cwd = event.fields.value(QLatin1String("cwd")).toString();
    if (!cwd.isEmpty())
        m_cwd = cwd;
    const QString status = event.fields.value(QLatin1String("status")).toString();
    if (event.fields.value(QLatin1String("state_lost")).toBool()) {
        fail(RestoreReport::Outcome::InterpreterLost);
    } else if (status != QLatin1String("ok")) {
        if (m_ename.isEmpty()) {
            // An interpreter that ends a run without an error event (a shell's nonzero status).
            m_ename = status == QLatin1String("interrupted") ? QStringLiteral("Interrupted")
                                                             : QStringLiteral("Failed");
            m_evalue = QStringLiteral("the execution ended with status \"%1\"").arg(status);
        }
        fail(RestoreReport::Outcome::Failed);
    } else {
        m_report.replayed += 1;
        m_inFlight.clear();
        m_over = ++m_next >= m_executions.size();
    }
    return true;
}

void Replay::interpreterEnded(const QString &reason)
{
    if (m_over)
        return;
    if (m_ename.isEmpty()) {
        m_ename = QStringLiteral("WorkerDied");
        m_evalue = reason;
    }
    fail(RestoreReport::Outcome::InterpreterLost);
}

bool Replay::isOver() const
{
    return m_over;
}

int Replay::inFlightExecutionCount() const
{
    return m_inFlight.isEmpty() ? 0 : m_executions.at(m_next).executionCount;
}

void Replay::fail(RestoreReport::Outcome outcome)
{
    const storage::ExecutionRecord &execution = m_executions.at(m_next);
    m_report.outcome = outcome;
    m_report.failedExecutionId = execution.id;
    m_report.failedExecutionCount = execution.executionCount;
    m_report.ename = m_ename;
    m_report.evalue = m_evalue;
    m_inFlight.clear();
    m_over = true;
}

} // namespace replhost::core
