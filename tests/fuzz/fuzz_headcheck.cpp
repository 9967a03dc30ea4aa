// SPDX-License-Identifier: Apache-2.0
// The head check in front of Qt HttpServer, over arbitrary bytes, with the server's limits and
// with small ones (so the limits' paths are reached too). Besides the sanitizers, it checks what
// the connection guard relies on: a complete head lies within the bytes, is found again in
// exactly those bytes, and a refusal has a status and a message.
#include "http/headcheck.h"

#include <cstdint>
#include <cstdlib>

using replhost::http::ConnectionLimits;
using replhost::http::HeadCheck;

namespace {

void check(QByteArrayView bytes, const ConnectionLimits &limits)
{
    const HeadCheck::Verdict verdict = HeadCheck::inspect(bytes, limits);
    switch (verdict.outcome) {
    case HeadCheck::Outcome::Incomplete:
        return;
    case HeadCheck::Outcome::Refused:
        if (verdict.refusal.status < 400 || verdict.refusal.status > 599
            || verdict.refusal.code.isEmpty() || verdict.refusal.message.isEmpty())
            std::abort();
        return;
    case HeadCheck::Outcome::Complete: {
        const auto &head = verdict.head;
        if (head.size <= 0 || head.size > bytes.size() || head.method.isEmpty()
            || head.target.isEmpty() || head.contentLength < 0
            || head.contentLength > limits.maxBodyBytes || (head.chunked && head.contentLength != 0))
            std::abort();
        const HeadCheck::Verdict again = HeadCheck::inspect(bytes.first(head.size), limits);
        if (again.outcome != HeadCheck::Outcome::Complete || again.head.size != head.size
            || again.head.fields != head.fields)
            std::abort();
        // One byte less is never a complete head.
        if (HeadCheck::inspect(bytes.first(head.size - 1), limits).outcome
            == HeadCheck::Outcome::Complete)
            std::abort();
        return;
    }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView bytes(reinterpret_cast<const char *>(data), qsizetype(size));
    check(bytes, ConnectionLimits());
    ConnectionLimits small;
    small.maxBodyBytes = 100;
    small.maxHeaderCount = 4;
    small.maxHeaderBytes = 256;
    check(bytes, small);
    return 0;
}
