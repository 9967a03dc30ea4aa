// SPDX-License-Identifier: Apache-2.0
// The worker frame reader and the frame check, fed what a worker could write on fd 4: whatever the
// bytes, the reader either takes frames or fails with a message, the check either passes a frame
// or says why, and nothing crashes, hangs or grows without bound.
#include "doneframe.h"
#include "framecheck.h"
#include "framing.h"

#include <QByteArrayView>
#include <QJsonObject>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

// A broken invariant: says which, then aborts (so that libFuzzer keeps the input).
[[noreturn]] void broken(const char *what)
{
    std::fprintf(stderr, "broken: %s\n", what);
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    // The first byte chooses how the rest is cut into reads, as a pipe may cut it anywhere.
    const qsizetype piece = 1 + data[0];
    const QByteArrayView input(reinterpret_cast<const char *>(data) + 1, qsizetype(size) - 1);
    // A small limit, so that a header cannot make the reader wait for more than the input holds.
    replhost::sdk::FrameReader reader(1 << 16);
    const auto handler = [](QByteArrayView body, QString *error) {
        if (std::optional<replhost::sdk::DoneFrame> done = replhost::sdk::DoneFrame::scan(body)) {
            // What the fast path takes, the full path takes as a `done` too.
            QJsonObject parsed;
            QString parseError;
            if (!replhost::sdk::FrameReader::parse(body, &parsed, &parseError))
                broken("scan() took a body the parser refuses");
            const auto kind = replhost::sdk::checkWorkerFrame(parsed);
            if (!kind || *kind != replhost::sdk::WorkerMessage::Done)
                broken("scan() took a frame the check refuses");
            (void)done->takeFields(true);
            return true;
        }
        QJsonObject message;
        if (!replhost::sdk::FrameReader::parse(body, &message, error))
            return false;
        const auto kind = replhost::sdk::checkWorkerFrame(message);
        if (!kind) {
            if (kind.error().message.isEmpty())
                broken("a refusal without a message");
            *error = kind.error().message;
            return false;
        }
        return true;
    };
    for (qsizetype at = 0; at < input.size(); at += piece) {
        if (!reader.feed(input.sliced(at, std::min(piece, input.size() - at)), handler)) {
            if (reader.error().isEmpty())
                broken("a failed reader without a message");
            break;
        }
    }
    return 0;
}
