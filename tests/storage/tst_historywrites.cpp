// SPDX-License-Identifier: Apache-2.0
// The encoding of history writes in the pending log. A log outlives the process that wrote it
// (a crash leaves it for the next start, possibly of another version), so the bytes are a file
// format: QDataStream's, version 6.4, which decodeWrites reads.
#include "storage/historywrites.h"

#include <QDataStream>
#include <QIODevice>
#include <QTest>

#include <limits>

using namespace replhost::storage;

namespace {

// Every kind of write, with the values an encoder gets wrong: null and empty strings and arrays,
// text beyond Latin-1 and beyond the BMP, negative and 64-bit numbers, both booleans.
std::vector<Write> everyKind()
{
    std::vector<Write> writes;
    ExecutionRecord e;
    e.id = QStringLiteral("exec-1");
    e.contextId = QStringLiteral("ctx");
    e.code = QStringLiteral("print('h\u00e9llo \u4e16\u754c \U0001F600')\n");
    e.status = QStringLiteral("running");
    e.executionCount = -3;
    e.startedAt = std::numeric_limits<qint64>::max() - 1;
    e.durationMs = -1;
    e.outputBytes = qint64(1) << 40;
    e.truncated = true;
    e.replay = false;
    writes.emplace_back(InsertExecution{e});
    ExecutionRecord empty;  // every string null
    writes.emplace_back(InsertExecution{empty});
    writes.emplace_back(AppendEvent{ExecutionEventRecord{QStringLiteral("exec-1"), 7,
                                                         QByteArray("{\"type\":\"done\"}")},
                                    {}});
    writes.emplace_back(AppendEvent{ExecutionEventRecord{QString(""), 0, QByteArray("")}, {}});
    writes.emplace_back(AppendEvent{ExecutionEventRecord{QString(), 0, QByteArray()}, {}});
    writes.emplace_back(FinishExecution{QStringLiteral("exec-1"), QStringLiteral("ok"), 12, 34,
                                        false, QString()});
    writes.emplace_back(FinishExecution{QStringLiteral("exec-2"), QStringLiteral("error"), 0, 0,
                                        true, QStringLiteral("[\"an answer\"]")});
    writes.emplace_back(UpdateContextUsage{QStringLiteral("ctx"), 42, QStringLiteral("/w/\u00e9"),
                                           -5});
    writes.emplace_back(UpdateContextUsage{QStringLiteral("ctx"), 0, QString(""), 0});
    SnapshotRecord s;
    s.contextId = QStringLiteral("ctx");
    s.executionCount = 9;
    s.format = QStringLiteral("python-pickle");
    s.data = QByteArray("\x00\x01\xff", 3);
    s.error = QString();
    s.createdAt = 99;
    writes.emplace_back(SaveSnapshot{s});
    SnapshotRecord failed;
    failed.contextId = QStringLiteral("ctx");
    failed.error = QStringLiteral("x: cannot pickle 'socket'");
    failed.lost = QString();
    writes.emplace_back(SaveSnapshot{failed});
    return writes;
}

// The same writes through QDataStream, field by field, as the log's format defines them.
QByteArray streamed(const std::vector<Write> &writes)
{
    QByteArray payload;
    QDataStream out(&payload, QIODevice::WriteOnly);
    out.setVersion(QDataStream::Qt_6_4);
    out << quint8(1) << quint32(writes.size());
    for (const Write &write : writes) {
        std::visit(Overloaded{
                       [&out](const InsertExecution &w) {
                           const ExecutionRecord &e = w.execution;
                           out << quint8(1) << e.id << e.contextId << e.code << e.status
                               << qint32(e.executionCount) << e.startedAt << e.durationMs
                               << e.outputBytes << e.truncated << e.replay;
                       },
                       [&out](const AppendEvent &w) {
                           out << quint8(2) << w.event.executionId << qint32(w.event.seq)
                               << w.event.json;
                       },
                       [&out](const FinishExecution &w) {
                           out << quint8(w.inputs.isEmpty() ? 3 : 6) << w.id << w.status
                               << w.durationMs << w.outputBytes << w.truncated;
                           if (!w.inputs.isEmpty())
                               out << w.inputs;
                       },
                       [&out](const UpdateContextUsage &w) {
                           out << quint8(4) << w.contextId << qint32(w.executionCount) << w.cwd
                               << w.lastUsedAt;
                       },
                       [&out](const SaveSnapshot &w) {
                           const SnapshotRecord &s = w.snapshot;
                           out << quint8(5) << s.contextId << qint32(s.executionCount)
                               << s.format << s.data << s.error << s.lost << s.createdAt;
                       },
                   },
                   write);
    }
    return payload;
}

} // namespace

class TstHistoryWrites : public QObject {
    Q_OBJECT

private slots:
    void encodingIsTheLogFormat();
    void writesComeBackAsTheyWere();
};

void TstHistoryWrites::encodingIsTheLogFormat()
{
    const std::vector<Write> writes = everyKind();
    QCOMPARE(encodeWrites(writes.cbegin(), writes.cend()), streamed(writes));
    const std::vector<Write> none;
    QCOMPARE(encodeWrites(none.cbegin(), none.cend()), streamed(none));
}

void TstHistoryWrites::writesComeBackAsTheyWere()
{
    const std::vector<Write> writes = everyKind();
    auto decoded = decodeWrites(encodeWrites(writes.cbegin(), writes.cend()));
    QVERIFY2(decoded.ok(), qPrintable(decoded.ok() ? QString() : decoded.error().message));
    QCOMPARE(decoded->size(), writes.size());
    const ExecutionRecord &sent = std::get<InsertExecution>(writes[0]).execution;
    const ExecutionRecord &insert = std::get<InsertExecution>((*decoded)[0]).execution;
    QCOMPARE(insert.id, sent.id);
    QCOMPARE(insert.code, sent.code);
    QCOMPARE(insert.executionCount, sent.executionCount);
    QCOMPARE(insert.startedAt, sent.startedAt);
    QCOMPARE(insert.durationMs, sent.durationMs);
    QCOMPARE(insert.outputBytes, sent.outputBytes);
    QCOMPARE(insert.truncated, sent.truncated);
    QCOMPARE(insert.replay, sent.replay);
    QCOMPARE(std::get<AppendEvent>((*decoded)[2]).event.json, QByteArray("{\"type\":\"done\"}"));
    QCOMPARE(std::get<AppendEvent>((*decoded)[2]).event.seq, 7);
    QCOMPARE(std::get<FinishExecution>((*decoded)[6]).inputs, QStringLiteral("[\"an answer\"]"));
    QCOMPARE(std::get<UpdateContextUsage>((*decoded)[7]).cwd, QStringLiteral("/w/\u00e9"));
    QCOMPARE(std::get<UpdateContextUsage>((*decoded)[7]).lastUsedAt, qint64(-5));
    QCOMPARE(std::get<SaveSnapshot>((*decoded)[9]).snapshot.data, QByteArray("\x00\x01\xff", 3));
}

QTEST_GUILESS_MAIN(TstHistoryWrites)
#include "tst_historywrites.moc"
