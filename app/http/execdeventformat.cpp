// SPDX-License-Identifier: Apache-2.0
#include "execdeventformat.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace replhost::http {

QJsonObject ExecdEventFormat::event(const char *type, qint64 nowMs)
{
    return {{QStringLiteral("type"), QLatin1String(type)}, {QStringLiteral("timestamp"), nowMs}};
}

QJsonObject ExecdEventFormat::init(const QString &id, qint64 nowMs)
{
    QJsonObject json = event("init", nowMs);
    json.insert(QStringLiteral("text"), id);
    return json;
}

QJsonObject ExecdEventFormat::ping(qint64 nowMs)
{
    QJsonObject json = event("ping", nowMs);
    json.insert(QStringLiteral("text"), QStringLiteral("pong"));
    return json;
}

QJsonObject ExecdEventFormat::complete(qint64 executionTimeMs, qint64 nowMs)
{
    QJsonObject json = event("execution_complete", nowMs);
    json.insert(QStringLiteral("execution_time"), std::max<qint64>(0, executionTimeMs));
    return json;
}

QByteArray ExecdEventFormat::frame(const QJsonObject &event)
{
    // Compact JSON escapes every newline inside strings, so the object is one line.
    return QJsonDocument(event).toJson(QJsonDocument::Compact) + "\n\n";
}

QJsonObject ExecdEventFormat::results(const QJsonObject &mimeBundle)
{
    QJsonObject out = mimeBundle;
    if (out.contains(QStringLiteral("text/plain")))
        out.insert(QStringLiteral("text"), out.take(QStringLiteral("text/plain")));
    return out;
}

void ExecdEventFormat::lines(const QString &stream, const QString &text, qint64 nowMs,
                             QList<QJsonObject> &out)
{
    QString pending = m_partialLines.value(stream) + text;
    qsizetype start = 0;
    for (qsizetype newline = pending.indexOf(QLatin1Char('\n')); newline >= 0;
         newline = pending.indexOf(QLatin1Char('\n'), start)) {
        QString line = pending.mid(start, newline - start);
        if (line.endsWith(QLatin1Char('\r')))
            line.chop(1);
        out.append(output(stream, line.isEmpty() ? QStringLiteral("\n") : line, nowMs));
        start = newline + 1;
    }
    m_partialLines.insert(stream, pending.mid(start));
}

void ExecdEventFormat::flushLines(qint64 nowMs, QList<QJsonObject> &out)
{
    for (const QString &stream : {QStringLiteral("stdout"), QStringLiteral("stderr")}) {
        const QString rest = m_partialLines.take(stream);
        if (rest.isEmpty())
            continue;
        out.append(output(stream, rest, nowMs));
    }
}

QJsonObject ExecdEventFormat::finalError(const sdk::Event &done, qint64 nowMs) const
{
    const QString status = done.fields.value(QStringLiteral("status")).toString();
    QString ename;
    QString evalue;
    if (m_mode == Mode::Command) {
        ename = QStringLiteral("CommandExecError");
        const QJsonValue code = done.fields.value(QStringLiteral("exit_code"));
        evalue = code.isDouble() ? QString::number(code.toInteger()) : status;
    } else if (status == QLatin1String("interrupted")) {
        ename = QStringLiteral("KeyboardInterrupt");
        evalue = QStringLiteral("the execution was interrupted");
    } else if (status == QLatin1String("timeout")) {
        ename = QStringLiteral("Timeout");
        evalue = QStringLiteral("the execution ran out of time");
    } else if (status == QLatin1String("aborted")) {
        ename = QStringLiteral("Aborted");
        evalue = QStringLiteral("the execution was aborted before it completed");
    } else {
        ename = QStringLiteral("ExecutionError");
        evalue = done.fields.value(QStringLiteral("state_lost")).toBool()
                ? QStringLiteral("the interpreter died; its state is lost")
                : QStringLiteral("the execution ended with status %1").arg(status);
    }
    QJsonObject json = event("error", nowMs);
    json.insert(QStringLiteral("error"), QJsonObject{{QStringLiteral("ename"), ename},
                                                     {QStringLiteral("evalue"), evalue},
                                                     {QStringLiteral("traceback"), QJsonArray()}});
    return json;
}

QJsonObject ExecdEventFormat::output(const QString &stream, const QString &text, qint64 nowMs)
{
    QJsonObject json = event(stream == QLatin1String("stderr") ? "stderr" : "stdout", nowMs);
    json.insert(QStringLiteral("text"), text);
    return json;
}

QList<QJsonObject> ExecdEventFormat::flushPending(qint64 nowMs)
{
    if (const std::optional<WholeLines::Piece> held = m_wholeLines.take())
        return {output(held->stream, held->text, nowMs)};
    return {};
}

QList<QJsonObject> ExecdEventFormat::translate(const sdk::Event &source, qint64 nowMs)
{
    const QJsonObject &fields = source.fields;
    if (source.kind == sdk::Event::Kind::Stream) {
        QList<QJsonObject> out;
        const QString name = fields.value(QStringLiteral("name")).toString();
        const QString text = fields.value(QStringLiteral("text")).toString();
        if (text.isEmpty())
            return out;
        if (m_mode == Mode::Command) {
            lines(name, text, nowMs, out);
            return out;
        }
        for (const WholeLines::Piece &piece : m_wholeLines.add(name, text))
            out.append(output(piece.stream, piece.text, nowMs));
        return out;
    }
    // Held-back output came first.
    QList<QJsonObject> out = flushPending(nowMs);
    switch (source.kind) {
    case sdk::Event::Kind::Stream:
        break;
    case sdk::Event::Kind::ClearOutput:
        break;  // OpenSandbox has no clearing of what was sent
    case sdk::Event::Kind::InputRequest:
        break;  // nor input: its runs never ask (they find the end of input)
    case sdk::Event::Kind::Display: {
        // Nor updates of a display: its results are the displays as first shown.
        if (fields.value(QStringLiteral("update")).toBool())
            break;
        QJsonObject json = event("result", nowMs);
        json.insert(QStringLiteral("results"), results(fields.value(QStringLiteral("data")).toObject()));
        out.append(json);
        break;
    }
    case sdk::Event::Kind::Result: {
        QJsonObject count = event("execution_count", nowMs);
        count.insert(QStringLiteral("execution_count"), fields.value(QStringLiteral("execution_count")).toInt());
        out.append(count);
        QJsonObject json = event("result", nowMs);
        json.insert(QStringLiteral("results"), results(fields.value(QStringLiteral("data")).toObject()));
        out.append(json);
        break;
    }
    case sdk::Event::Kind::Error: {
        if (m_mode == Mode::Command)
            flushLines(nowMs, out);
        QJsonObject json = event("error", nowMs);
        json.insert(QStringLiteral("error"),
                    QJsonObject{{QStringLiteral("ename"), fields.value(QStringLiteral("ename")).toString()},
                                {QStringLiteral("evalue"), fields.value(QStringLiteral("evalue")).toString()},
                                {QStringLiteral("traceback"), fields.value(QStringLiteral("traceback")).toArray()}});
        out.append(json);
        m_errorSent = true;
        break;
    }
    case sdk::Event::Kind::Done: {
        if (m_mode == Mode::Command)
            flushLines(nowMs, out);
        const QString status = fields.value(QStringLiteral("status")).toString();
        const QJsonValue exitCode = fields.value(QStringLiteral("exit_code"));
        const bool success = status == QLatin1String("ok")
                && (m_mode == Mode::Code || !exitCode.isDouble() || exitCode.toInteger() == 0);
        if (success) {
            // Drivers report fractions of a millisecond; toInteger() would give 0 for those.
            out.append(complete(qint64(fields.value(QStringLiteral("duration_ms")).toDouble()), nowMs));
        } else if (!m_errorSent || m_mode == Mode::Command) {
            // A command's own errors (timeout, start failure) come before the exit code.
            out.append(finalError(source, nowMs));
            m_errorSent = true;
        }
        break;
    }
    case sdk::Event::Kind::Started:
    case sdk::Event::Kind::Other:
        break;
    }
    return out;
}

} // namespace replhost::http
