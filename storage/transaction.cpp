// SPDX-License-Identifier: Apache-2.0
#include "transaction.h"

#include "database.h"
#include "statement.h"

#include <sqlite3.h>

namespace replhost::storage {

// Savepoints may share a name: ROLLBACK TO and RELEASE act on the most recent one with that name,
// which is always the innermost Transaction because Transactions nest strictly.
Transaction::Transaction(Database &db) : m_db(db)
{
    Result<void> begun;
    if (db.m_transactionDepth > 0) {
        // SQLite ends a transaction by itself after some errors (a full disk, an I/O error).
        // Going on would run each later statement in autocommit mode, committing it alone; the
        // caller's unit of work is already lost, so fail instead.
        if (sqlite3_get_autocommit(db.handle())) {
            m_error = makeError(QStringLiteral("storage"),
                                QStringLiteral("the enclosing transaction was rolled back after "
                                               "an error (database %1)")
                                    .arg(db.path()));
            return;
        }
        m_nested = true;
        begun = Statement(db, "SAVEPOINT nested").run();
    } else {
        // Through Statement rather than Database::execute(), so the statement is prepared once
        // per connection and not again for every transaction.
        begun = Statement(db, "BEGIN IMMEDIATE").run();
    }
    if (!begun) {
        m_error = begun.error();
        return;
    }
    m_active = true;
    ++m_db.m_transactionDepth;
}

Transaction::~Transaction()
{
    rollback();
}

Result<void> Transaction::commit()
{
    if (!m_active) {
        if (m_error)
            return *m_error;
        return makeError(QStringLiteral("storage"),
                         QStringLiteral("commit of a transaction that already ended"));
    }
    // On failure the transaction stays active and the destructor rolls it back.
    if (auto r = Statement(m_db, m_nested ? "RELEASE nested" : "COMMIT").run(); !r)
        return r.error();
    m_active = false;
    --m_db.m_transactionDepth;
    return {};
}

void Transaction::rollback()
{
    if (!m_active)
        return;
    // Straight to sqlite3_exec, which neither allocates on our side nor throws. Failures are
    // ignored: they mean SQLite already rolled back (see the constructor).
    sqlite3 *handle = m_db.handle();
    if (m_nested) {
        sqlite3_exec(handle, "ROLLBACK TO nested", nullptr, nullptr, nullptr);
        sqlite3_exec(handle, "RELEASE nested", nullptr, nullptr, nullptr);
    } else {
        sqlite3_exec(handle, "ROLLBACK", nullptr, nullptr, nullptr);
    }
    m_active = false;
    --m_db.m_transactionDepth;
    ++m_db.m_rollbackCount;
}

} // namespace replhost::storage
