// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <optional>

namespace replhost::storage {

class Database;

// A scoped transaction: begins in the constructor, rolls back in the destructor unless commit()
// succeeded. Destructors never throw, and a failed rollback in a destructor is ignored: SQLite has
// then already rolled the transaction back itself.
//
// The outermost Transaction on a connection is BEGIN IMMEDIATE, so it takes the write lock up
// front (waiting up to busy_timeout) instead of failing later when a read turns into a write.
// A Transaction opened while another is active on the same connection is a savepoint: rolling it
// back undoes only its own work, and its commit becomes durable with the outer commit. This lets
// every Store method be one transaction on its own and still compose inside Store::transaction.
//
//     Transaction tx(db);
//     if (!tx.ok()) return tx.error();
//     ... writes ...
//     return tx.commit();
//
// Ownership: borrows the Database, which must outlive it. Transactions on one connection nest
// strictly (destroyed in reverse order of creation), which scoped objects guarantee.
class Transaction {
public:
    explicit Transaction(Database &db);
    ~Transaction();
    Transaction(const Transaction &) = delete;
    Transaction &operator=(const Transaction &) = delete;

    // Whether the transaction began. If not, error() says why; commit() then fails too.
    bool ok() const { return !m_error.has_value(); }
    const Error &error() const { return *m_error; }

    Result<void> commit();
    // Rolls back now instead of in the destructor.
    void rollback();

private:
    Database &m_db;
    std::optional<Error> m_error;
    bool m_nested = false;
    bool m_active = false;  // began, and neither committed nor rolled back yet
};

} // namespace replhost::storage
