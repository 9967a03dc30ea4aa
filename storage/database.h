// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <QString>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

struct sqlite3;
struct sqlite3_stmt;

namespace replhost::storage {

// One SQLite connection, configured the way all of replhost's storage expects it: WAL journal,
// synchronous=NORMAL (a commit in WAL mode is durable against a crash of the process, and at most
// the last commits are lost on a power failure, never consistency), busy_timeout=5000 and foreign
// keys enforced.
//
// Prepared statements are kept per connection, by SQL text, and reused (see Statement): preparing
// costs far more than running the small statements replhost issues, many times per execution.
//
// Ownership: owns the sqlite3 handle and closes it in the destructor, after finalizing the kept
// statements. Statements and transactions borrow the Database and must not outlive it.
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

    // Fails if a Transaction is open on this connection but SQLite has ended it by itself after
    // an error (a full disk, an I/O error): statements run now would each commit alone. Work done
    // inside an enclosing transaction without a savepoint of its own checks this first.
    Result<void> checkEnclosingTransaction() const;

    // How many transactions and savepoints have been rolled back on this connection. Anything
    // remembered about rows written inside a transaction is stale once this has changed.
    quint64 rollbackCount() const { return m_rollbackCount; }

    // The extended result code of the most recent failure (SQLITE_CONSTRAINT_UNIQUE, ...).
    int lastExtendedErrorCode() const;

    // An Error for the connection's most recent failure. `code` is derived from the extended
    // SQLite result code: "conflict" for a UNIQUE or PRIMARY KEY violation, "not_found" for a
    // FOREIGN KEY violation (the row referred to does not exist), "storage" for anything else.
    Error lastError() const;
    static QString errorCodeFor(int extendedResultCode);

private:
    friend class Statement;
    friend class Transaction;

    Database(sqlite3 *handle, QString path);

    // A prepared statement for `sql`: a kept one if there is one not in use, else a new one
    // (null, with the error left on the connection, if it cannot be prepared).
    sqlite3_stmt *acquireStatement(const char *sql);
    // Takes back a statement that acquireStatement(sql) returned: reset, its bindings cleared,
    // and kept for the next use of the same SQL (or finalized when the cache is full or one is
    // kept already).
    void releaseStatement(const char *sql, sqlite3_stmt *stmt);

    // Heterogeneous lookup: a const char * finds its entry without building a std::string.
    struct SqlHash {
        using is_transparent = void;
        std::size_t operator()(std::string_view sql) const
        {
            return std::hash<std::string_view>{}(sql);
        }
    };

    sqlite3 *const m_handle;  // constant after construction, never null
    const QString m_path;
    // Nesting depth of Transaction objects. The outermost one is BEGIN IMMEDIATE … COMMIT, inner
    // ones are savepoints.
    int m_transactionDepth = 0;
    quint64 m_rollbackCount = 0;
    // SQL text → a kept statement, or null while the kept one is in use.
    std::unordered_map<std::string, sqlite3_stmt *, SqlHash, std::equal_to<>> m_statements;
};

} // namespace replhost::storage
