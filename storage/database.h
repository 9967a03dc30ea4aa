// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <QString>

#include <memory>

struct sqlite3;

namespace replhost::storage {

// One SQLite connection, configured the way all of replhost's storage expects it: WAL journal,
// synchronous=NORMAL (a commit in WAL mode is durable against a crash of the process, and at most
// the last commits are lost on a power failure, never consistency), busy_timeout=5000 and foreign
// keys enforced.
//
// Ownership: owns the sqlite3 handle and closes it in the destructor. Statements and transactions
// borrow the Database and must not outlive it.
// Threading: a connection is used by one thread at a time. It may be handed to another thread
// (the history writer opens its connection on the caller's thread to report errors there, then
// uses it only on its own thread), but never used from two threads at once.
class Database {
public:
    // Opens or creates the file at `path`. Does not create parent directories (Store::open does)
    // and does not touch the schema (see migrations.h).
    static Result<std::unique_ptr<Database>> open(const QString &path);
    ~Database();
    Database(const Database &) = delete;
    Database &operator=(const Database &) = delete;

    QString path() const { return m_path; }
    sqlite3 *handle() const { return m_handle; }

    // Runs one or more statements that return no rows (schema changes, pragmas).
    Result<void> execute(const char *sql);

    // Rows changed by the last INSERT, UPDATE or DELETE on this connection.
    qint64 changes() const;
    qint64 lastInsertRowId() const;

    // True while a transaction opened by a Transaction is active on this connection.
    bool inTransaction() const;

    // An Error for the connection's most recent failure. `code` is derived from the extended
    // SQLite result code: "conflict" for a UNIQUE or PRIMARY KEY violation, "not_found" for a
    // FOREIGN KEY violation (the row referred to does not exist), "storage" for anything else.
    Error lastError() const;
    static QString errorCodeFor(int extendedResultCode);

private:
    friend class Transaction;

    Database(sqlite3 *handle, QString path);

    sqlite3 *const m_handle;  // constant after construction, never null
    const QString m_path;
    // Nesting depth of Transaction objects. The outermost one is BEGIN IMMEDIATE … COMMIT, inner
    // ones are savepoints.
    int m_transactionDepth = 0;
};

} // namespace replhost::storage
