// SPDX-License-Identifier: Apache-2.0
#include "e2beventformat.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QPair>

namespace replhost::http {

namespace {

// MIME type → E2B result field; every other type goes into "extra".
struct MimeField {
    QLatin1String mime;
    QLatin1String field;
};
constexpr MimeField kMimeFields[] = {
    {QLatin1String("text/plain"), QLatin1String("text")},
    {QLatin1String("text/html"), QLatin1String("html")},
    {QLatin1String("text/markdown"), QLatin1String("markdown")},
    {QLatin1String("image/svg+xml"), QLatin1String("svg")},
    {QLatin1String("image/png"), QLatin1String("png")},
    {QLatin1String("image/jpeg"), QLatin1String("jpeg")},
    {QLatin1String("application/pdf"), QLatin1String("pdf")},
    {QLatin1String("text/latex"), QLatin1String("latex")},
    {QLatin1String("application/json"), QLatin1String("json")},
    {QLatin1String("application/javascript"), QLatin1String("javascript")},
    // The chart model is E2B's own, so it travels as it is.
    {QLatin1String("application/vnd.replhost.chart+json"), QLatin1String("chart")},
};

const QLatin1String kTableMime("application/vnd.replhost.data+json");

// E2B's `data` of a DataFrame is pandas' to_dict(orient="list"): each column's name with its list
// of values (the index left out). replhost's table lists its columns in order; an object keyed by
// name has no order, and of columns with the same name the last one stays, as in pandas' dict.
QJsonObject columnsByName(const QJsonObject &table)
{
    QJsonObject columns;
    for (const QJsonValue &column : table.value(QLatin1String("columns")).toArray()) {
        const QJsonObject c = column.toObject();
        const QJsonValue name = c.value(QLatin1String("name"));
        columns.insert(name.isString() ? name.toString() : QString::number(name.toDouble()),
                       c.value(QLatin1String("values")));
    }
    return columns;
}

// The error E2B clients see for a run that ended badly without one (the engine normally sends
// its own first, so this is a safety net rather than the rule).
QPair<QString, QString> errorForStatus(const QString &status)
{
    if (status == QLatin1String("interrupted"))
        return {QStringLiteral("ExecutionInterrupted"), QStringLiteral("the execution was interrupted")};
    if (status == QLatin1String("timeout"))
        return {QStringLiteral("Timeout"), QStringLiteral("the execution exceeded its time limit")};
    if (status == QLatin1String("aborted"))
        return {QStringLiteral("ExecutionAborted"), QStringLiteral("the execution was aborted")};
    return {QStringLiteral("ExecutionFailed"), QStringLiteral("the execution ended with status %1").arg(status)};
}

// What a client must be told of replhost's own events, which E2B has no event for; empty for
// the rest.
QString notice(const sdk::Event &event)
{
    const QJsonObject &fields = event.fields;
    if (event.type == QLatin1String("state_reset"))
        return fields.value(QLatin1String("reason")).toString();
    if (event.type == QLatin1String("truncated"))
        return fields.value(QLatin1String("message")).toString();
    if (event.type == QLatin1String("restored") && !fields.value(QLatin1String("complete")).toBool()) {
        const QJsonObject failed = fields.value(QLatin1String("failed_execution")).toObject();
        return QStringLiteral("this context was restored by running %1 of its %2 earlier runs again; "
                              "the next one failed (%3: %4), so later state is missing")
                .arg(fields.value(QLatin1String("replayed")).toInt())
                .arg(fields.value(QLatin1String("total")).toInt())
                .arg(failed.value(QLatin1String("ename")).toString(),
                     failed.value(QLatin1String("evalue")).toString());
    }
    return {};
}

} // namespace

QList<QJsonObject> E2bEventFormat::translate(const sdk::Event &event, const QDateTime &now)
{
    const QJsonObject &fields = event.fields;
    if (event.kind == sdk::Event::Kind::Stream)
        return streamed(fields.value(QLatin1String("name")).toString(),
                        fields.value(QLatin1String("text")).toString(), now);
    // Held-back output came first.
    QList<QJsonObject> lines = flushPending(now);
    switch (event.kind) {
    case sdk::Event::Kind::Started:
        lines.append({{QStringLiteral("type"), QStringLiteral("number_of_executions")},
                      {QStringLiteral("execution_count"), fields.value(QLatin1String("execution_count"))}});
        break;
    case sdk::Event::Kind::Stream:
        break;
    case sdk::Event::Kind::Result:
    case sdk::Event::Kind::Display:
        // E2B has no updates of a display: its results are the displays as first shown.
        if (fields.value(QLatin1String("update")).toBool())
            break;
        lines.append(result(fields.value(QLatin1String("data")).toObject(),
                            event.kind == sdk::Event::Kind::Result));
        break;
    case sdk::Event::Kind::ClearOutput:
        break;  // nor clearing: results already sent stay with the client
    case sdk::Event::Kind::InputRequest:
        break;  // nor input: its runs never ask (they find the end of input)
    case sdk::Event::Kind::Error: {
        QStringList traceback;
        for (const QJsonValue &line : fields.value(QLatin1String("traceback")).toArray())
            traceback.append(line.toString());
        const QJsonObject line = error(fields.value(QLatin1String("ename")).toString(),
                                       fields.value(QLatin1String("evalue")).toString(),
                                       traceback.join(QLatin1Char('\n')));
        if (!line.isEmpty())
            lines.append(line);
        break;
    }
    case sdk::Event::Kind::Done: {
        const QString status = fields.value(QLatin1String("status")).toString();
        if (status != QLatin1String("ok") && status != QLatin1String("error")) {
            const auto [name, value] = errorForStatus(status);
            if (const QJsonObject made = error(name, value, {}); !made.isEmpty())
                lines.append(made);
        }
        lines.append(endOfExecution());
        break;
    }
    case sdk::Event::Kind::Other:
        if (const QString text = notice(event); !text.isEmpty())
            lines.append(output(QStringLiteral("stderr"), QStringLiteral("[replhost] %1\n").arg(text), now));
        break;
    }
    return lines;
}

QList<QJsonObject> E2bEventFormat::flushPending(const QDateTime &now)
{
    if (const std::optional<WholeLines::Piece> held = m_lines.take())
        return {output(held->stream, held->text, now)};
    return {};
}

QList<QJsonObject> E2bEventFormat::streamed(const QString &stream, const QString &text, const QDateTime &now)
{
    QList<QJsonObject> lines;
    for (const WholeLines::Piece &piece : m_lines.add(stream, text))
        lines.append(output(piece.stream, piece.text, now));
    return lines;
}

QJsonObject E2bEventFormat::keepAlive()
{
    return {{QStringLiteral("type"), QStringLiteral("keepalive")}};
}

QJsonObject E2bEventFormat::endOfExecution()
{
    return {{QStringLiteral("type"), QStringLiteral("end_of_execution")}};
}

QJsonObject E2bEventFormat::result(const QJsonObject &mimeBundle, bool isMainResult)
{
    QJsonObject out{{QStringLiteral("type"), QStringLiteral("result")}};
    QJsonObject extra = mimeBundle;
    for (const MimeField &known : kMimeFields) {
        const auto it = extra.constFind(known.mime);
        if (it == extra.constEnd())
            continue;
        QJsonValue value = *it;
        extra.remove(known.mime);
        if (known.field == QLatin1String("text")) {
            const QString text = value.toString();
            if (text.size() >= 2 && text.startsWith(QLatin1Char('\'')) && text.endsWith(QLatin1Char('\'')))
                value = text.mid(1, text.size() - 2);
        }
        out.insert(known.field, value);
    }
    if (const auto table = extra.constFind(kTableMime); table != extra.constEnd()) {
        out.insert(QStringLiteral("data"), columnsByName(table->toObject()));
        extra.remove(kTableMime);
    }
    out.insert(QStringLiteral("extra"), extra);
    out.insert(QStringLiteral("is_main_result"), isMainResult);
    return out;
}

QByteArray E2bEventFormat::line(const QJsonObject &event)
{
    return QJsonDocument(event).toJson(QJsonDocument::Compact) + '\n';
}

QJsonObject E2bEventFormat::output(const QString &stream, const QString &text, const QDateTime &now)
{
    return {{QStringLiteral("type"), stream == QLatin1String("stderr") ? QStringLiteral("stderr")
                                                                       : QStringLiteral("stdout")},
            {QStringLiteral("text"), text},
            {QStringLiteral("timestamp"), now.toUTC().toString(Qt::ISODateWithMs)}};
}

QJsonObject E2bEventFormat::error(const QString &name, const QString &value, const QString &traceback)
{
    if (m_errorSent)
        return {};
    m_errorSent = true;
    return {{QStringLiteral("type"), QStringLiteral("error")},
            {QStringLiteral("name"), name},
            {QStringLiteral("value"), value},
            {QStringLiteral("traceback"), traceback}};
}

} // namespace replhost::http
