// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <QByteArray>
#include <QString>

#include <vector>

namespace replhost::storage {

// An append-only file beside the database holding history writes that clients were told about
// but that SQLite has not committed yet (HistoryWriter, "Durable contexts" in
// docs/architecture.md). Appending one record is one write(2) of a few hundred bytes, where
// committing the same writes to SQLite on their own rewrites eight or more B-tree pages: the log
// lets an execution's end be acknowledged at the cost of the first, and the pages be written
// once for many executions, in SQLite's next batch.
//
// A record is its sequence number, its payload and a checksum of both. Sequence numbers grow
// across clear(): the database records the last one it applied (in the same transaction as the
// writes), so a record found again after a crash between that commit and clear() is recognised
// and skipped rather than applied twice.
//
// Durability is that of SQLite's WAL with synchronous=NORMAL, which the database uses: a record
// survives a crash of the process as soon as append() returned, and a power loss once the kernel
// has written the file back. A record cut short by a crash during append() (or damaged on the
// disk) ends what read() returns: it, and anything after it, was never acknowledged.
//
// Threading: one thread uses a PendingLog at a time. Errors: "storage", with errno's text.
class PendingLog {
public:
    struct Record {
        quint64 seq = 0;
        QByteArray payload;
    };

    // Opens `path` for appending, creating it (mode 0600) when missing.
    static Result<PendingLog> open(const QString &path);

    PendingLog(PendingLog &&other) noexcept;
    PendingLog &operator=(PendingLog &&other) noexcept;
    PendingLog(const PendingLog &) = delete;
    PendingLog &operator=(const PendingLog &) = delete;
    ~PendingLog();

    QString path() const { return m_path; }

    // The whole records in the file, in the order they were appended, up to the first one that
    // is cut short or fails its checksum.
    Result<std::vector<Record>> read() const;

    // Appends one record with one write(2) (more only if the kernel takes it in parts). After a
    // failure the file may end in part of the record, which read() would stop at and so hide
    // every record appended after it: commit what the log holds by other means and clear() it
    // before appending again.
    Result<void> append(quint64 seq, const QByteArray &payload);

    // Empties the file, once what it holds is committed.
    Result<void> clear();

private:
    PendingLog(QString path, int fd);

    QString m_path;
    int m_fd = -1;
};

} // namespace replhost::storage
