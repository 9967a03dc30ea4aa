// SPDX-License-Identifier: Apache-2.0
#include "multipartbody.h"

#include <QByteArrayView>

namespace replhost::http {

namespace {

Error bad(const QString &message)
{
    return makeError(QStringLiteral("bad_request"), message);
}

// The value of `name` among the ';'-separated parameters of a header value, unquoted.
QByteArray parameter(const QByteArray &header, const QByteArray &name)
{
    const QList<QByteArray> pieces = header.split(';');
    for (qsizetype i = 1; i < pieces.size(); ++i) {
        const QByteArray piece = pieces[i].trimmed();
        const qsizetype equals = piece.indexOf('=');
        if (equals < 0 || piece.left(equals).trimmed().toLower() != name)
            continue;
        QByteArray value = piece.mid(equals + 1).trimmed();
        if (value.size() >= 2 && value.startsWith('"') && value.endsWith('"')) {
            value = value.mid(1, value.size() - 2);
            value.replace("\\\"", "\"");
            value.replace("\\\\", "\\");
        }
        return value;
    }
    return {};
}

} // namespace

bool MultipartBody::isMultipart(const QByteArray &contentType)
{
    return contentType.trimmed().toLower().startsWith("multipart/form-data");
}

Result<QList<MultipartBody::Part>> MultipartBody::parse(const QByteArray &contentType,
                                                        const QByteArray &body)
{
    if (!isMultipart(contentType))
        return bad(QStringLiteral("the body must be multipart/form-data"));
    const QByteArray boundary = parameter(contentType, "boundary");
    if (boundary.isEmpty() || boundary.size() > 70)
        return bad(QStringLiteral("the multipart Content-Type has no usable boundary"));
    const QByteArray delimiter = "--" + boundary;
    const QByteArray separator = "\r\n" + delimiter;

    QList<Part> parts;
    qsizetype position = body.indexOf(delimiter);
    if (position < 0)
        return bad(QStringLiteral("the multipart body does not contain its boundary"));
    position += delimiter.size();
    while (true) {
        if (body.mid(position, 2) == "--")
            return parts;  // the close delimiter
        // Transport padding (spaces and tabs) may follow a delimiter before its line break.
        while (position < body.size() && (body[position] == ' ' || body[position] == '\t'))
            ++position;
        if (body.mid(position, 2) != "\r\n")
            return bad(QStringLiteral("malformed multipart body: a boundary line does not end "
                                      "with CRLF"));
        position += 2;
        const qsizetype headersEnd = body.indexOf("\r\n\r\n", position);
        const qsizetype blankFirst = body.mid(position, 2) == "\r\n" ? position : -1;
        if (headersEnd < 0 && blankFirst < 0)
            return bad(QStringLiteral("malformed multipart body: a part has no header end"));
        Part part;
        const qsizetype dataStart = blankFirst >= 0 ? position + 2 : headersEnd + 4;
        if (blankFirst < 0) {
            for (const QByteArray &line : body.mid(position, headersEnd - position).split('\n')) {
                const QByteArray trimmed = line.trimmed();
                const qsizetype colon = trimmed.indexOf(':');
                if (colon < 0)
                    continue;
                const QByteArray name = trimmed.left(colon).trimmed().toLower();
                const QByteArray value = trimmed.mid(colon + 1).trimmed();
                if (name == "content-disposition") {
                    part.name = QString::fromUtf8(parameter(value, "name"));
                    part.fileName = QString::fromUtf8(parameter(value, "filename"));
                } else if (name == "content-type") {
                    part.contentType = value;
                }
            }
        }
        const qsizetype dataEnd = body.indexOf(separator, dataStart);
        if (dataEnd < 0)
            return bad(QStringLiteral("malformed multipart body: a part is not closed by the "
                                      "boundary"));
        part.data = body.mid(dataStart, dataEnd - dataStart);
        parts.append(part);
        position = dataEnd + separator.size();
    }
}

} // namespace replhost::http
