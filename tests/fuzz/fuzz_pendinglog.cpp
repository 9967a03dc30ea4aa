// SPDX-License-Identifier: Apache-2.0
// The pending log as a start-up finds it after a crash or a damaged disk: the input is both a
// whole log file (PendingLog::read, then each record's payload decoded) and one record's payload
// on its own (decodeWrites, which a valid checksum would otherwise keep mutations from). A
// payload that decodes must encode to one that decodes to the same writes.
#include "storage/historywrites.h"
#include "storage/pendinglog.h"

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace replhost::storage;

namespace {

[[noreturn]] void broken(const char *what)
{
    std::fprintf(stderr, "broken: %s\n", what);
    std::abort();
}

void checkPayload(const QByteArray &payload)
{
    auto writes = decodeWrites(payload);
    if (!writes)
        return;
    const QByteArray again = encodeWrites(writes->cbegin(), writes->cend());
    auto second = decodeWrites(again);
    if (!second)
        broken("an encoded payload does not decode");
    if (second->size() != writes->size())
        broken("a payload decodes to another number of writes once encoded");
    if (encodeWrites(second->cbegin(), second->cend()) != again)
        broken("encoding is not stable");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static QTemporaryDir dir;
    if (!dir.isValid())
        broken("no temporary directory");
    const QByteArray bytes(reinterpret_cast<const char *>(data), qsizetype(size));
    checkPayload(bytes);

    const QString path = dir.filePath(QStringLiteral("replhost.db-pending"));
    {
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(bytes) != bytes.size())
            broken("cannot write the log file");
    }
    auto log = PendingLog::open(path);
    if (!log)
        broken("cannot open the log file");
    auto records = log->read();
    if (!records)
        broken("a readable file fails to read");
    qsizetype total = 0;
    for (const PendingLog::Record &record : *records) {
        total += record.payload.size();
        checkPayload(record.payload);
    }
    if (total > bytes.size())
        broken("records hold more than the file");
    // What read() took is what a log with the same records appends, byte for byte.
    if (!log->clear())
        broken("cannot empty the log");
    for (const PendingLog::Record &record : *records) {
        if (!log->append(record.seq, record.payload))
            broken("cannot append");
    }
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        broken("cannot read the log back");
    const QByteArray rewritten = file.readAll();
    if (rewritten != bytes.left(rewritten.size()))
        broken("the records read are not the file's first bytes");
    return 0;
}
