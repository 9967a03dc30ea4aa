// SPDX-License-Identifier: Apache-2.0
// An upload's multipart/form-data body, split by MultipartBody (Poco's MultipartReader and
// parameter splitting underneath). The input is a Content-Type line, a newline, then the body,
// so boundaries and parameters are fuzzed as well as the parts. Besides the sanitizers, it checks
// that parts hold no more bytes than the body and that failures are "bad_request".
#include "http/multipartbody.h"

#include <cstdint>
#include <cstdlib>

using replhost::http::MultipartBody;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray input = QByteArray::fromRawData(reinterpret_cast<const char *>(data), qsizetype(size));
    const qsizetype newline = input.indexOf('\n');
    if (newline < 0)
        return 0;
    const QByteArray contentType = input.left(newline);
    const QByteArray body = input.mid(newline + 1);
    const auto parts = MultipartBody::parse(contentType, body);
    if (!parts.ok()) {
        if (parts.error().code != QLatin1String("bad_request") || parts.error().message.isEmpty())
            std::abort();
        return 0;
    }
    qsizetype total = 0;
    for (const MultipartBody::Part &part : *parts)
        total += part.data.size();
    if (total > body.size())
        std::abort();
    return 0;
}
