// SPDX-License-Identifier: Apache-2.0
#include "mcpcoderesult.h"

#include "mcpschema.h"

#include <QJsonArray>
#include <QStringList>

namespace replhost::http {

namespace {

QJsonObject text(const QString &body)
{
    return {{QStringLiteral("type"), QStringLiteral("text")}, {QStringLiteral("text"), body}};
}

// The beginning of `full`, at most McpCodeResult::kTextLimit bytes of UTF-8 and never half a
// character; `cut` tells whether anything was left out.
QString bounded(const QString &full, bool *cut)
{
    const QByteArray utf8 = full.toUtf8();
    *cut = utf8.size() > McpCodeResult::kTextLimit;
    if (!*cut)
        return full;
    qsizetype end = McpCodeResult::kTextLimit;
    while (end > 0 && (quint8(utf8[end]) & 0xC0) == 0x80)
        --end;  // back to the start of the character the limit falls in
    return QString::fromUtf8(utf8.constData(), end);
}

QString cutNote(const QString &stream, qsizetype fullBytes, const QString &executionId)
{
    return QStringLiteral("[%1 cut at %2 of %3 bytes; the whole output is kept with execution %4 "
                          "(GET /v1/executions/%4)]")
            .arg(stream)
            .arg(McpCodeResult::kTextLimit)
            .arg(fullBytes)
            .arg(executionId);
}

} // namespace

QJsonObject McpCodeResult::fromDocument(const QJsonObject &execution)
{
    const QString id = execution.value(QLatin1String("id")).toString();
    const QString status = execution.value(QLatin1String("status")).toString();
    QJsonArray content;
    bool truncated = false;
    QJsonObject structured{{QStringLiteral("execution_id"), id},
                           {QStringLiteral("context_id"), execution.value(QLatin1String("context_id"))},
                           {QStringLiteral("language"), execution.value(QLatin1String("language"))},
                           {QStringLiteral("status"), status},
                           {QStringLiteral("execution_count"), execution.value(QLatin1String("execution_count"))},
                           {QStringLiteral("duration_ms"), execution.value(QLatin1String("duration_ms"))},
                           {QStringLiteral("state_lost"), execution.value(QLatin1String("state_lost")).toBool()}};
    for (const char *stream : {"stdout", "stderr"}) {
        const QString full = execution.value(QLatin1String(stream)).toString();
        bool cut = false;
        QString shown = bounded(full, &cut);
        structured.insert(QLatin1String(stream), shown);
        if (shown.isEmpty())
            continue;
        if (cut) {
            truncated = true;
            shown += QLatin1Char('\n') + cutNote(QLatin1String(stream), full.toUtf8().size(), id);
        }
        content.append(text(stream == QByteArrayView("stderr") ? QStringLiteral("[stderr]\n") + shown : shown));
    }

    qsizetype imageBytes = 0;
    int imagesLeftOut = 0;
    auto addImages = [&](const QJsonObject &bundle) {
        for (const char *mime : {"image/png", "image/jpeg"}) {
            const QString data = bundle.value(QLatin1String(mime)).toString();
            if (data.isEmpty())
                continue;
            if (imageBytes + data.size() > kImageLimit) {
                ++imagesLeftOut;
                continue;
            }
            imageBytes += data.size();
            // The bundle holds images base64-encoded already (as Jupyter's do).
            content.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("image")},
                                       {QStringLiteral("data"), data},
                                       {QStringLiteral("mimeType"), QLatin1String(mime)}});
        }
    };

    // A display is its image where it has one (a figure's text/plain only names it), otherwise its
    // text: R's visible values are displays (IRkernel sends them so), and a model reads them here.
    QJsonArray displays;
    for (const QJsonValue &value : execution.value(QLatin1String("displays")).toArray()) {
        const QJsonObject bundle = value.toObject();
        QJsonObject display{{QStringLiteral("mime_types"), QJsonArray::fromStringList(bundle.keys())}};
        const QJsonValue plain = bundle.value(QLatin1String("text/plain"));
        if (plain.isString())
            display.insert(QStringLiteral("text"), plain);
        displays.append(display);
        const bool image = bundle.contains(QLatin1String("image/png")) || bundle.contains(QLatin1String("image/jpeg"));
        if (!image && !plain.toString().isEmpty())
            content.append(text(plain.toString()));
        addImages(bundle);
    }
    structured.insert(QStringLiteral("displays"), displays);

    const QJsonObject result = execution.value(QLatin1String("result")).toObject();
    const QJsonValue resultText = result.value(QLatin1String("text/plain"));
    structured.insert(QStringLiteral("result"), resultText.isString() ? resultText : QJsonValue());
    if (resultText.isString() && !resultText.toString().isEmpty())
        content.append(text(resultText.toString()));
    addImages(result);

    const QJsonValue error = execution.value(QLatin1String("error"));
    structured.insert(QStringLiteral("error"), error.isObject() ? error : QJsonValue());
    if (error.isObject()) {
        const QJsonObject e = error.toObject();
        QStringList lines;
        for (const QJsonValue &line : e.value(QLatin1String("traceback")).toArray())
            lines.append(line.toString());
        if (lines.isEmpty())
            lines.append(e.value(QLatin1String("ename")).toString() + QStringLiteral(": ")
                         + e.value(QLatin1String("evalue")).toString());
        content.append(text(lines.join(QLatin1Char('\n'))));
    }
    if (imagesLeftOut > 0)
        content.append(text(QStringLiteral("[%1 image(s) left out: more than %2 bytes of images; "
                                           "execution %3 keeps them]")
                                    .arg(imagesLeftOut)
                                    .arg(kImageLimit)
                                    .arg(id)));

    const QJsonValue exitCode = execution.value(QLatin1String("exit_code"));
    structured.insert(QStringLiteral("exit_code"), exitCode.isDouble() ? exitCode : QJsonValue());
    structured.insert(QStringLiteral("truncated"), truncated);
    if (status != QLatin1String("ok")) {
        QString line = QStringLiteral("[status: %1").arg(status);
        if (exitCode.isDouble())
            line += QStringLiteral(", exit code %1").arg(exitCode.toInt());
        if (structured.value(QLatin1String("state_lost")).toBool())
            line += QStringLiteral("; the context's state was lost");
        content.append(text(line + QStringLiteral("; execution %1]").arg(id)));
    } else if (content.isEmpty()) {
        content.append(text(QStringLiteral("(no output)")));
    }
    return {{QStringLiteral("content"), content},
            {QStringLiteral("structuredContent"), structured},
            {QStringLiteral("isError"), status != QLatin1String("ok")}};
}

QJsonObject McpCodeResult::outputSchema()
{
    using S = McpSchema;
    const QJsonObject error = S::object(
            {{QStringLiteral("ename"), S::string()},
             {QStringLiteral("evalue"), S::string()},
             {QStringLiteral("traceback"), S::arrayOf(S::string())}});
    QJsonObject nullableError = error;
    nullableError.insert(QStringLiteral("type"), QJsonArray{QStringLiteral("object"), QStringLiteral("null")});
    const QJsonObject display = S::object({{QStringLiteral("mime_types"), S::arrayOf(S::string())},
                                           {QStringLiteral("text"), S::string()}});
    return S::object(
            {{QStringLiteral("execution_id"), S::string(QStringLiteral("Fetch it again with GET /v1/executions/{id}"))},
             {QStringLiteral("context_id"), S::nullableString()},
             {QStringLiteral("language"), S::string()},
             {QStringLiteral("status"),
              S::enumeration({QStringLiteral("ok"), QStringLiteral("error"), QStringLiteral("interrupted"),
                              QStringLiteral("aborted"), QStringLiteral("timeout")})},
             {QStringLiteral("execution_count"), S::of({QStringLiteral("integer")})},
             {QStringLiteral("duration_ms"), S::of({QStringLiteral("number")})},
             {QStringLiteral("stdout"), S::string()},
             {QStringLiteral("stderr"), S::string()},
             {QStringLiteral("result"), S::nullableString(QStringLiteral("text/plain of the last expression's value"))},
             {QStringLiteral("error"), nullableError},
             {QStringLiteral("displays"), S::arrayOf(display)},
             {QStringLiteral("state_lost"), S::of({QStringLiteral("boolean")})},
             {QStringLiteral("exit_code"), S::of({QStringLiteral("integer"), QStringLiteral("null")})},
             {QStringLiteral("truncated"), S::of({QStringLiteral("boolean")})}},
            {QStringLiteral("execution_id"), QStringLiteral("status"), QStringLiteral("stdout"),
             QStringLiteral("stderr"), QStringLiteral("result"), QStringLiteral("error"),
             QStringLiteral("displays")});
}

} // namespace replhost::http
