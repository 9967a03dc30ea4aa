// SPDX-License-Identifier: Apache-2.0
// The done-frame fast path against the full one: a body DoneFrame::scan() takes must parse, pass
// checkWorkerFrame() as a `done`, and give the same fields as the parsed object (its members but
// `type`, `id` and `mark`, `status` "ok" when missing, and the two flags), the same id and mark,
// with and without the shape a worker's previous `done` left.
#include "doneframe.h"
#include "framecheck.h"
#include "framing.h"

#include <QByteArrayView>
#include <QJsonObject>

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

QJsonObject expectedFields(QJsonObject parsed, bool synced)
{
    parsed.remove(QStringLiteral("type"));
    parsed.remove(QStringLiteral("id"));
    parsed.remove(QStringLiteral("mark"));
    if (!parsed.contains(QStringLiteral("status")))
        parsed.insert(QStringLiteral("status"), QStringLiteral("ok"));
    parsed.insert(QStringLiteral("streams_synced"), synced);
    parsed.insert(QStringLiteral("state_lost"), false);
    return parsed;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace replhost::sdk;
    const QByteArrayView body(reinterpret_cast<const char *>(data), qsizetype(size));
    std::optional<DoneFrame> first = DoneFrame::scan(body);
    if (!first)
        return 0;
    QJsonObject parsed;
    QString error;
    if (!FrameReader::parse(body, &parsed, &error))
        broken("scan() took a body the parser refuses");
    const auto kind = checkWorkerFrame(parsed);
    if (!kind || *kind != WorkerMessage::Done)
        broken("scan() took a frame the check refuses");
    if (QString::fromLatin1(first->idText()) != parsed.value(QStringLiteral("id")).toString())
        broken("the id differs");
    if (first->hasMark() != parsed.contains(QStringLiteral("mark"))
        || (first->hasMark()
            && qint64(first->mark()) != parsed.value(QStringLiteral("mark")).toInteger()))
        broken("the mark differs");
    // Once parsed (keeping the shape), once from the shape it left.
    DoneFrame::Recent recent;
    std::optional<DoneFrame> second = DoneFrame::scan(body);
    const bool synced = size % 2 == 0;
    if (first->takeFields(synced, &recent) != expectedFields(parsed, synced)
        || second->takeFields(synced, &recent) != expectedFields(parsed, synced))
        broken("the fields differ");
    return 0;
}
