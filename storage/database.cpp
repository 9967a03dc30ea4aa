// SPDX-License-Identifier: Apache-2.0
#include "database.h"

#include "statement.h"

#include <sqlite3.h>

#include <utility>

namespace replhost::storage {

namespace {

constexpr int kBusyTimeoutMs = 5000;
// replhost's SQL is a few dozen fixed strings; the bound only guards against a caller that builds
// SQL at run time, whose statements would otherwise pile up.
constexpr std::size_t kMaxKeptStatements = 128;

// `cause` already names the database.
Error configureError(const QString &what, const Error &cause)
{
    return makeError(cause.code, QStringLiteral("could not %1: %2").arg(what, cause.message));
}

// Reads the single value a pragma returns.
Result<QString> pragmaValue(Database &db, const char *sql)
{
    Statement s(db, sql);
    auto row = s.step();
    if (!row)
        return row.error();
    if (!*row)
        return QString();
    return s.columnString(0);
}

} // namespace

Database::Database(sqlite3 *handle, QString path) : m_handle(handle), m_path(std::move(path)) {}

Database::~Database()
{
    for (auto &[sql, stmt] : m_statements)
        sqlite3_finalize(stmt);  // a no-op on null (a statement still in use: see below)
    // close_v2 rather than close: should a statement still be alive (a bug elsewhere), the
    // connection is closed when it is finalized instead of leaking.
    sqlite3_close_v2(m_handle);
}

Result<std::unique_ptr<Database>> Database::open(const QString &path)
{
    sqlite3 *handle = nullptr;
    const int rc = sqlite3_open_v2(path.toUtf8().constData(), &handle,
                                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    if (rc != SQLITE_OK) {
        const QString reason = QString::fromUtf8(handle ? sqlite3_errmsg(handle)
                                                        : sqlite3_errstr(rc));
        sqlite3_close_v2(handle);  // a handle is returned even on most failures
        return makeError(QStringLiteral("storage"),
                         QStringLiteral("could not open database %1: %2").arg(path, reason));
    }
    sqlite3_extended_result_codes(handle, 1);
    sqlite3_busy_timeout(handle, kBusyTimeoutMs);
    std::unique_ptr<Database> db(new Database(handle, path));

    const auto notADatabase = [&path] {
        return makeError(QStringLiteral("storage"),
                         QStringLiteral("%1 is not a replhost database (not an SQLite file); "
                                        "move it away or use another data directory")
                             .arg(path));
    };
    // Retention frees pages, which incremental_vacuum gives back to the file system a few at a
    // time. The mode takes effect only on a file without tables, and only before the journal
    // mode is set (setting WAL writes the header of a new file); an older file keeps its mode
    // until Store::open converts it. The first statement touches the file, so this is also where
    // an unreadable or non-database file is reported.
    if (auto r = db->execute("PRAGMA auto_vacuum = INCREMENTAL"); !r) {
        if (sqlite3_errcode(handle) == SQLITE_NOTADB)
            return notADatabase();
        return configureError(QStringLiteral("set auto_vacuum"), r.error());
    }
    auto mode = pragmaValue(*db, "PRAGMA journal_mode = WAL");
    if (!mode) {
        if (sqlite3_errcode(handle) == SQLITE_NOTADB)
            return notADatabase();
        return configureError(QStringLiteral("enable WAL mode"), mode.error());
    }
    // WAL is what lets the history writer commit while other connections read; without it the
    // design does not hold, so refuse rather than run degraded.
    if (mode->compare(QLatin1String("wal"), Qt::CaseInsensitive) != 0) {
        return makeError(QStringLiteral("storage"),
                         QStringLiteral("could not enable WAL mode for database %1 (journal mode "
                                        "is \"%2\"); keep the data directory on a local "
                                        "filesystem")
                             .arg(path, *mode));
    }
    if (auto r = db->execute("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON"); !r)
        return configureError(QStringLiteral("set pragmas"), r.error());
    // foreign_keys is silently a no-op in a build without foreign key support; cascades depend
    // on it, so check that it took.
    auto fk = pragmaValue(*db, "PRAGMA foreign_keys");
    if (!fk)
        return configureError(QStringLiteral("enable foreign keys"), fk.error());
    if (*fk != QLatin1String("1")) {
        return makeError(QStringLiteral("storage"),
                         QStringLiteral("could not enable foreign keys for database %1: this "
                                        "SQLite library was built without them")
                             .arg(path));
    }
    return db;
}

Result<void> Database::execute(const char *sql)
{
    char *message = nullptr;
    const int rc = sqlite3_exec(m_handle, sql, nullptr, nullptr, &message);
    if (rc == SQLITE_OK)
        return {};
    const QString reason = QString::fromUtf8(message ? message : sqlite3_errstr(rc));
    sqlite3_free(message);
    return makeError(errorCodeFor(sqlite3_extended_errcode(m_handle)),
                     QStringLiteral("%1 (database %2)").arg(reason, m_path));
}

qint64 Database::changes() const
{
    return sqlite3_changes(m_handle);
}

qint64 Database::lastInsertRowId() const
{
    return sqlite3_last_insert_rowid(m_handle);
}

bool Database::inTransaction() const
{
    return m_transactionDepth > 0;
}

Result<void> Database::checkEnclosingTransaction() const
{
    if (m_transactionDepth > 0 && sqlite3_get_autocommit(m_handle)) {
        return makeError(QStringLiteral("storage"),
                         QStringLiteral("the enclosing transaction was rolled back after an error "
                                        "(database %1)")
                             .arg(m_path));
    }
    return {};
}

int Database::lastExtendedErrorCode() const
{
    return sqlite3_extended_errcode(m_handle);
}

sqlite3_stmt *Database::acquireStatement(const char *sql)
{
    if (auto it = m_statements.find(std::string_view(sql)); it != m_statements.end() && it->second)
        return std::exchange(it->second, nullptr);
    // PERSISTENT: the statement is meant to live long, so SQLite allocates it outside its
    // lookaside memory, which is for short-lived objects.
    sqlite3_stmt *stmt = nullptr;
    if (sqlite3_prepare_v3(m_handle, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr)
        != SQLITE_OK) {
        sqlite3_finalize(stmt);
        return nullptr;
    }
    return stmt;
}

void Database::releaseStatement(const char *sql, sqlite3_stmt *stmt)
{
    if (!stmt)
        return;
    // Reset first: a statement left mid-way would keep its read transaction (and so an old
    // snapshot of the WAL) open. Clearing the bindings frees copies of large values (code,
    // event JSON) now rather than at the next use.
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    // Keyed by the caller's text, not sqlite3_sql(), which may differ from it (trailing text).
    auto it = m_statements.find(std::string_view(sql));
    if (it == m_statements.end()) {
        if (m_statements.size() < kMaxKeptStatements) {
            m_statements.emplace(sql, stmt);
            return;
        }
    } else if (!it->second) {
        it->second = stmt;
        return;
    }
    // Another statement for the same SQL is kept already (two were in use at once), or the
    // cache is full.
    sqlite3_finalize(stmt);
}

Error Database::lastError() const
{
    return makeError(errorCodeFor(sqlite3_extended_errcode(m_handle)),
                     QStringLiteral("%1 (database %2)")
                         .arg(QString::fromUtf8(sqlite3_errmsg(m_handle)), m_path));
}

QString Database::errorCodeFor(int extendedResultCode)
{
    switch (extendedResultCode) {
    case SQLITE_CONSTRAINT_UNIQUE:
    case SQLITE_CONSTRAINT_PRIMARYKEY:
        return QStringLiteral("conflict");
    case SQLITE_CONSTRAINT_FOREIGNKEY:
        return QStringLiteral("not_found");
    default:
        return QStringLiteral("storage");
    }
}

} // namespace replhost::storage
