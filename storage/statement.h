// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <QByteArray>
#include <QString>

#include <optional>

struct sqlite3_stmt;

namespace replhost::storage {

class Database;

// One prepared statement, taken from its Database in the constructor and given back in the
// destructor. The Database keeps statements by SQL text and hands the same one out again (reset,
// with no bindings), so `sql` should be a fixed string: a Statement costs a lookup instead of a
// prepare. Two Statements for the same SQL may be alive at once; the second gets its own.
//
// Errors are sticky values, never exceptions: a failed prepare or bind is remembered, later binds
// are ignored, and the first error is returned by the next step() or run(). So a caller binds
// everything and checks once:
//
//     Statement s(db, "UPDATE contexts SET name = :name WHERE id = :id");
//     s.bind(":name", name);
//     s.bind(":id", id);
//     if (auto r = s.run(); !r) return r.error();
//
// Text is stored as UTF-8, QByteArray as a BLOB (an empty one as a zero-length BLOB, not NULL).
// Ownership: borrows the Database, which must outlive it. Threading: that of its Database.
class Statement {
public:
    Statement(Database &db, const char *sql);
    ~Statement();
    Statement(const Statement &) = delete;
    Statement &operator=(const Statement &) = delete;

    // Indexes start at 1, as in SQLite.
    void bind(int index, const QString &value);
    void bind(int index, qint64 value);
    void bind(int index, int value);
    void bind(int index, const QByteArray &value);
    void bindNull(int index);

    // `name` includes its prefix (":id"). An unknown name is an error.
    void bind(const char *name, const QString &value);
    void bind(const char *name, qint64 value);
    void bind(const char *name, int value);
    void bind(const char *name, const QByteArray &value);
    void bindNull(const char *name);

    // Advances to the next row: true if one is available (read it with the column getters),
    // false when the statement is done.
    Result<bool> step();
    // Steps to the end, for statements that return no rows.
    Result<void> run();
    // Makes the statement ready to run again; bindings are kept until rebound. Clears a sticky
    // error from binding or stepping (not one from preparing).
    void reset();

    // Column getters, valid after step() returned true. Indexes start at 0, as in SQLite.
    bool isNull(int column) const;
    QString columnString(int column) const;
    qint64 columnInt64(int column) const;
    int columnInt(int column) const;
    bool columnBool(int column) const;
    QByteArray columnBlob(int column) const;

private:
    int parameterIndex(const char *name);
    void check(int resultCode);  // records the first failure
    void fail(Error error);

    Database &m_db;
    const char *const m_sql;         // the caller's text, the Database's key for m_stmt
    sqlite3_stmt *m_stmt = nullptr;  // null only if preparing failed
    std::optional<Error> m_error;
    bool m_prepareFailed = false;
};

} // namespace replhost::storage
