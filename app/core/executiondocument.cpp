// SPDX-License-Identifier: Apache-2.0
#include "executiondocument.h"

#include "jsonwriter.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonArray>
#include <QJsonObject>

#include <cstring>
#include <optional>
#include <vector>

namespace replhost::core {

using sdk::Event;

namespace {

// Events read at a time from an execution whose older events are in the archive.
constexpr int kPageEvents = 256;

// `,"key":` in one piece.
template <qsizetype N>
void appendKey(JsonWriter &out, const char (&key)[N])
{
    char text[N + 3];
    text[0] = ',';
    text[1] = '"';
    std::memcpy(text + 2, key, N - 1);
    text[N + 1] = '"';
    text[N + 2] = ':';
    out.raw(QByteArrayView(text, N + 3));
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
void appendIsoTime(JsonWriter &out, const QDateTime &time)
{
    const qint64 ms = time.toMSecsSinceEpoch();
    if (time.timeSpec() != Qt::UTC || ms < 0 || ms >= 253402300800000LL) {
        out.raw(time.toString(Qt::ISODateWithMs).toLatin1());
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
    out.raw(QByteArrayView(text, sizeof text - 1));
}

} // namespace

Result<QByteArray> ExecutionDocument::write(const Execution &execution, bool withEvents)
{
    // One pass over the events collects the summary and writes the events array.
    QString out, err;
    QJsonObject result;
    QJsonObject error;
    bool hasError = false;
    // What the run shows at its end: updates replace the data of the display they name, a
    // clear drops what was shown before it (a waiting clear when the next output comes).
    struct Shown {
        QJsonValue data;
        QString displayId;
    };
    std::vector<Shown> shown;
    // The questions the run asked and what was answered: {prompt, password, value | eof}.
    // A password's answer was never recorded (ContextManager::answerInput).
    QJsonArray inputs;
    bool clearPending = false;
    const auto applyPendingClear = [&] {
        if (clearPending)
            shown.clear();
        clearPending = false;
    };
    const int count = execution.eventCount();
    // About what a short event takes (its execution id alone is some 40 bytes), so that the
    // array of a few events is allocated once.
    JsonWriter events(withEvents ? 16 + 384 * qsizetype(count) : 16);
    events.raw('[');
    bool stateLost = false;
    QJsonValue cwd, exitCode;
    for (int next = 0; next < count;) {
        auto page = execution.eventRange(next, kPageEvents);
        if (!page)
            return page.error();
        for (const Event &e : std::as_const(*page)) {
            switch (e.kind) {
            case Event::Kind::Stream:
                applyPendingClear();
                (e.fields.value(QLatin1String("name")).toString() == QLatin1String("stderr") ? err : out)
                        += e.fields.value(QLatin1String("text")).toString();
                break;
            case Event::Kind::Result:
                applyPendingClear();
                result = e.fields.value(QLatin1String("data")).toObject();
                break;
            case Event::Kind::Display: {
                const QString displayId = e.fields.value(QLatin1String("display_id")).toString();
                const QJsonValue data = e.fields.value(QLatin1String("data"));
                if (e.fields.value(QLatin1String("update")).toBool()) {
                    // An update of a display of an earlier run changes nothing shown here.
                    for (Shown &display : shown)
                        if (display.displayId == displayId)
                            display.data = data;
                    break;
                }
                applyPendingClear();
                shown.push_back({data, displayId});
                break;
            }
            case Event::Kind::ClearOutput:
                clearPending = true;
                if (!e.fields.value(QLatin1String("wait")).toBool())
                    applyPendingClear();
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
            case Event::Kind::InputRequest:
                inputs.append(QJsonObject{
                        {QStringLiteral("prompt"), e.fields.value(QLatin1String("prompt"))},
                        {QStringLiteral("password"), e.fields.value(QLatin1String("password")).toBool()}});
                break;
            case Event::Kind::Other:
                if (e.type == QLatin1String("input_reply") && !inputs.isEmpty()) {
                    QJsonObject asked = inputs.last().toObject();
                    for (const char *key : {"value", "eof"}) {
                        const QJsonValue value = e.fields.value(QLatin1String(key));
                        if (!value.isUndefined())
                            asked.insert(QLatin1String(key), value);
                    }
                    inputs.replace(inputs.size() - 1, asked);
                }
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
                    events.raw(',');
                events.event(e);
            }
        }
        next += int(page->size());
    }
    events.raw(']');
    std::optional<JsonWriter> displays;  // most runs display nothing: "[]" then
    for (const Shown &display : shown) {
        if (displays)
            displays->raw(',');
        else
            displays.emplace().raw('[');
        displays->value(display.data);
    }
    if (displays)
        displays->raw(']');

    // Keys in the order QJsonDocument would write them (sorted), so the document reads the same.
    JsonWriter doc(512 + 3 * (out.size() + err.size()) + events.size()
                   + (displays ? displays->size() : 0));
    doc.raw("{\"code\":");
    doc.string(execution.code());
    appendKey(doc, "context_id");
    if (execution.contextId().isEmpty())
        doc.raw("null");
    else
        doc.string(execution.contextId());
    if (!cwd.isUndefined()) {
        appendKey(doc, "cwd");
        doc.value(cwd);
    }
    appendKey(doc, "displays");
    if (displays)
        doc.raw(displays->take());
    else
        doc.raw("[]");
    appendKey(doc, "duration_ms");
    doc.integer(execution.durationMs());
    appendKey(doc, "error");
    if (hasError)
        doc.value(error);
    else
        doc.raw("null");
    if (withEvents) {
        appendKey(doc, "events");
        doc.raw(events.take());
    }
    appendKey(doc, "execution_count");
    doc.integer(execution.executionCount());
    if (!exitCode.isUndefined()) {
        appendKey(doc, "exit_code");
        doc.value(exitCode);
    }
    appendKey(doc, "id");
    doc.string(execution.id());
    if (!inputs.isEmpty()) {
        appendKey(doc, "inputs");
        doc.value(inputs);
    }
    appendKey(doc, "language");
    doc.string(execution.language());
    appendKey(doc, "result");
    if (result.isEmpty())
        doc.raw("null");
    else
        doc.value(result);
    appendKey(doc, "started_at");
    doc.raw('"');
    appendIsoTime(doc, execution.startedAt());
    doc.raw('"');
    appendKey(doc, "state_lost");
    doc.raw(stateLost ? QByteArrayView("true") : QByteArrayView("false"));
    appendKey(doc, "status");
    doc.string(execution.status());
    appendKey(doc, "stderr");
    doc.string(err);
    appendKey(doc, "stdout");
    doc.string(out);
    appendKey(doc, "workspace");
    doc.string(execution.workspace());
    doc.raw('}');
    return doc.take();
}

Result<QJsonObject> ExecutionDocument::object(const Execution &execution, bool withEvents)
{
    auto bytes = write(execution, withEvents);
    if (!bytes)
        return bytes.error();
    return QJsonDocument::fromJson(*bytes).object();
}

} // namespace replhost::core
