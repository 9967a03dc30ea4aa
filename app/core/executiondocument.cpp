// SPDX-License-Identifier: Apache-2.0
#include "executiondocument.h"

#include "jsontext.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstring>

namespace replhost::core {

using sdk::Event;

namespace {

// Events read at a time from an execution whose older events are in the archive.
constexpr int kPageEvents = 256;

// `,"key":` in one append: piece by piece it cost five appends per key.
template <qsizetype N>
void appendKey(QByteArray &out, const char (&key)[N])
{
    char text[N + 3];
    text[0] = ',';
    text[1] = '"';
    std::memcpy(text + 2, key, N - 1);
    text[N + 1] = '"';
    text[N + 2] = ':';
    out.append(text, N + 3);
}

// `value` as `width` decimal digits, zero-padded, at `at`.
void writeDigits(char *at, int value, int width)
{
    for (int i = width - 1; i >= 0; --i) {
        at[i] = char('0' + value % 10);
        value /= 10;
    }
}

// What QDateTime::toString(Qt::ISODateWithMs) writes for a UTC time ("2026-01-31T09:05:07.042Z"),
// for a fraction of its cost; other times, and years outside 1970..9999, are left to Qt.
void appendIsoTime(QByteArray &out, const QDateTime &time)
{
    const qint64 ms = time.toMSecsSinceEpoch();
    if (time.timeSpec() != Qt::UTC || ms < 0 || ms >= 253402300800000LL) {
        out += time.toString(Qt::ISODateWithMs).toLatin1();
        return;
    }
    // Civil date from days since 1970-01-01 (H. Hinnant's days_from_civil, inverted).
    const qint64 days = ms / 86400000;
    qint64 rest = ms % 86400000;
    const qint64 z = days + 719468;
    const qint64 era = z / 146097;
    const qint64 doe = z - era * 146097;
    const qint64 yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const qint64 doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const qint64 mp = (5 * doy + 2) / 153;
    const int day = int(doy - (153 * mp + 2) / 5 + 1);
    const int month = int(mp < 10 ? mp + 3 : mp - 9);
    const int year = int(yoe + era * 400 + (month <= 2));
    const int hour = int(rest / 3600000);
    rest %= 3600000;
    const int minute = int(rest / 60000);
    rest %= 60000;
    const int second = int(rest / 1000);
    const int milli = int(rest % 1000);
    // Written digit by digit: snprintf cost ten times as much.
    char text[] = "0000-00-00T00:00:00.000Z";
    writeDigits(text, year, 4);
    writeDigits(text + 5, month, 2);
    writeDigits(text + 8, day, 2);
    writeDigits(text + 11, hour, 2);
    writeDigits(text + 14, minute, 2);
    writeDigits(text + 17, second, 2);
    writeDigits(text + 20, milli, 3);
    out.append(text, sizeof text - 1);
}

} // namespace

Result<QByteArray> ExecutionDocument::write(const Execution &execution, bool withEvents)
{
    // One pass over the events collects the summary and writes the events array.
    QString out, err;
    QJsonObject result;
    QJsonObject error;
    bool hasError = false;
    QByteArray displays = "[";
    QByteArray events = withEvents ? QByteArray("[") : QByteArray();
    bool stateLost = false;
    QJsonValue cwd, exitCode;
    const int count = execution.eventCount();
    for (int next = 0; next < count;) {
        auto page = execution.eventRange(next, kPageEvents);
        if (!page)
            return page.error();
        for (const Event &e : std::as_const(*page)) {
            switch (e.kind) {
            case Event::Kind::Stream:
                (e.fields.value(QLatin1String("name")).toString() == QLatin1String("stderr") ? err : out)
                        += e.fields.value(QLatin1String("text")).toString();
                break;
            case Event::Kind::Result:
                result = e.fields.value(QLatin1String("data")).toObject();
                break;
            case Event::Kind::Display:
                if (displays.size() > 1)
                    displays += ',';
                JsonText::appendValue(displays, e.fields.value(QLatin1String("data")));
                break;
            case Event::Kind::Error:
                error = {};
                // A field the event lacks is left out, as QJsonObject drops undefined values.
                for (const char *key : {"ename", "evalue", "traceback"}) {
                    const QJsonValue value = e.fields.value(QLatin1String(key));
                    if (!value.isUndefined())
                        error.insert(QLatin1String(key), value);
                }
                hasError = true;
                break;
            case Event::Kind::Done:
                stateLost = e.fields.value(QLatin1String("state_lost")).toBool();
                cwd = e.fields.value(QLatin1String("cwd"));
                exitCode = e.fields.value(QLatin1String("exit_code"));
                break;
            default:
                break;
            }
            if (withEvents) {
                if (events.size() > 1)
                    events += ',';
                JsonText::appendEvent(events, e);
            }
        }
        next += int(page->size());
    }
    displays += ']';

    // Keys in the order QJsonDocument would write them (sorted), so the document reads the same.
    QByteArray doc;
    doc.reserve(512 + out.size() + err.size() + events.size() + displays.size());
    doc += "{\"code\":";
    JsonText::appendString(doc, execution.code());
    appendKey(doc, "context_id");
    if (execution.contextId().isEmpty())
        doc += "null";
    else
        JsonText::appendString(doc, execution.contextId());
    if (!cwd.isUndefined()) {
        appendKey(doc, "cwd");
        JsonText::appendValue(doc, cwd);
    }
    appendKey(doc, "displays");
    doc += displays;
    appendKey(doc, "duration_ms");
    doc += QByteArray::number(execution.durationMs());
    appendKey(doc, "error");
    if (hasError)
        JsonText::appendValue(doc, error);
    else
        doc += "null";
    if (withEvents) {
        appendKey(doc, "events");
        doc += events;
        doc += ']';
    }
    appendKey(doc, "execution_count");
    doc += QByteArray::number(execution.executionCount());
    if (!exitCode.isUndefined()) {
        appendKey(doc, "exit_code");
        JsonText::appendValue(doc, exitCode);
    }
    appendKey(doc, "id");
    JsonText::appendString(doc, execution.id());
    appendKey(doc, "language");
    JsonText::appendString(doc, execution.language());
    appendKey(doc, "result");
    if (result.isEmpty())
        doc += "null";
    else
        JsonText::appendValue(doc, result);
    appendKey(doc, "started_at");
    doc += '"';
    appendIsoTime(doc, execution.startedAt());
    doc += '"';
    appendKey(doc, "state_lost");
    doc += stateLost ? "true" : "false";
    appendKey(doc, "status");
    JsonText::appendString(doc, execution.status());
    appendKey(doc, "stderr");
    JsonText::appendString(doc, err);
    appendKey(doc, "stdout");
    JsonText::appendString(doc, out);
    appendKey(doc, "workspace");
    JsonText::appendString(doc, execution.workspace());
    doc += '}';
    return doc;
}

Result<QJsonObject> ExecutionDocument::object(const Execution &execution, bool withEvents)
{
    auto bytes = write(execution, withEvents);
    if (!bytes)
        return bytes.error();
    return QJsonDocument::fromJson(*bytes).object();
}

} // namespace replhost::core
