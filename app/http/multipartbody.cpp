// SPDX-License-Identifier: Apache-2.0
#include "multipartbody.h"

#include <Poco/Exception.h>
#include <Poco/MemoryStream.h>
#include <Poco/Net/MessageHeader.h>
#include <Poco/Net/MultipartReader.h>
#include <Poco/Net/NameValueCollection.h>

#include <istream>
#include <string>

namespace replhost::http {

namespace {

Error bad(const QString &message)
{
    return makeError(QStringLiteral("bad_request"), message);
}

// More files than any upload sends at once.
constexpr qsizetype kMaxParts = 1024;

std::string toStd(const QByteArray &bytes)
{
    return std::string(bytes.constData(), size_t(bytes.size()));
}

// An RFC 8187 ext-value ("UTF-8''na%C3%AFve.txt", "iso-8859-1'en'%A3.txt"); empty when it is
// not one (an unknown charset included).
QString decodeExtValue(const std::string &value)
{
    const size_t charsetEnd = value.find('\'');
    const size_t languageEnd = charsetEnd == std::string::npos ? std::string::npos
                                                               : value.find('\'', charsetEnd + 1);
    if (languageEnd == std::string::npos)
        return {};
    const QByteArray charset = QByteArray::fromStdString(value.substr(0, charsetEnd)).toLower();
    const QByteArray text =
            QByteArray::fromPercentEncoding(QByteArray::fromStdString(value.substr(languageEnd + 1)));
    if (charset == "utf-8")
        return QString::fromUtf8(text);
    if (charset == "iso-8859-1")
        return QString::fromLatin1(text);
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
    // Poco's parameter splitting honours quoted strings: a boundary or a filename may hold ';'.
    std::string mediaType;
    Poco::Net::NameValueCollection typeParameters;
    Poco::Net::MessageHeader::splitParameters(toStd(contentType), mediaType, typeParameters);
    const std::string boundary = typeParameters.get("boundary", std::string());
    if (boundary.empty() || boundary.size() > 70)
        return bad(QStringLiteral("the multipart Content-Type has no usable boundary"));

    const QByteArray delimiter = "--" + QByteArray::fromStdString(boundary);
    if (!body.contains(delimiter))
        return bad(QStringLiteral("the multipart body does not contain its boundary"));
    // Poco's reader ends the last part where the body ends; a body cut short is not an upload.
    if (!body.startsWith(delimiter + "--") && !body.contains("\r\n" + delimiter + "--"))
        return bad(QStringLiteral("malformed multipart body: it does not end with the closing "
                                  "boundary"));

    QList<Part> parts;
    try {
        // Read where the body lies, without copying it into a stream first.
        Poco::MemoryInputStream in(body.constData(), size_t(body.size()));
        Poco::Net::MultipartReader reader(in, boundary);
        while (reader.hasNextPart()) {
            // Poco 1.11's reader can go on finding empty parts in a malformed body without
            // consuming it (a fuzzer's finding): the count of parts is bounded.
            if (parts.size() == kMaxParts)
                return bad(QStringLiteral("the multipart body has more than %1 parts")
                                   .arg(kMaxParts));
            Poco::Net::MessageHeader header;
            reader.nextPart(header);
            Part part;
            std::string disposition;
            Poco::Net::NameValueCollection parameters;
            Poco::Net::MessageHeader::splitParameters(
                    header.get("Content-Disposition", std::string()), disposition, parameters);
            part.name = QString::fromStdString(parameters.get("name", std::string()));
            // filename* (RFC 6266 §4.3) wins over filename when both are sent and it is readable.
            const QString extended = decodeExtValue(parameters.get("filename*", std::string()));
            part.fileName = extended.isEmpty()
                    ? QString::fromStdString(parameters.get("filename", std::string()))
                    : extended;
            part.contentType = QByteArray::fromStdString(header.get("Content-Type", std::string()));
            std::istream &data = reader.stream();
            char block[64 * 1024];
            while (data.read(block, sizeof block) || data.gcount() > 0)
                part.data.append(block, qsizetype(data.gcount()));
            parts.append(std::move(part));
        }
    } catch (const Poco::Exception &error) {
        return bad(QStringLiteral("malformed multipart body: %1")
                           .arg(QString::fromStdString(error.displayText())));
    }
    return parts;
}

} // namespace replhost::http
