// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <QByteArray>
#include <QList>
#include <QString>

namespace replhost::http {

// A multipart/form-data request body (RFC 7578) split into its parts by Poco::Net's
// MultipartReader, its parameters (boundary, name, filename) by Poco's MessageHeader, which
// honours quoted strings ("a;b.txt"); filename* (RFC 6266, RFC 8187: UTF-8''na%C3%AFve.txt) is
// decoded and wins over filename. The body is already in memory (bounded by the server's body
// limit).
//
// Errors: "bad_request" (not multipart, no boundary, malformed framing).
// Threading: none; plain values.
class MultipartBody {
public:
    struct Part {
        QString name;           // the form field's name
        QString fileName;       // the filename parameter; empty for plain fields
        QByteArray contentType; // the part's Content-Type, if any
        QByteArray data;
    };

    // `contentType` is the request's Content-Type header, which carries the boundary.
    static Result<QList<Part>> parse(const QByteArray &contentType, const QByteArray &body);

    static bool isMultipart(const QByteArray &contentType);
};

} // namespace replhost::http
