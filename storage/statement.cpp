// SPDX-License-Identifier: Apache-2.0
#include "statement.h"

#include "database.h"

#include <sqlite3.h>

namespace replhost::storage {

namespace {

// SQLite binds a null data pointer as NULL, whatever the length; an empty string or BLOB must be
// bound from a valid pointer to stay a value.
const char *nonNull(const char *data)
{
    return data ? data : "";
}

} // namespace

Statement::Statement(Database &db, const char *sql)
    : m_db(db), m_sql(sql), m_stmt(db.acquireStatement(sql))
{
    if (!m_stmt) {
        m_prepareFailed = true;
        fail(db.lastError());
    }
}

Statement::~Statement()
{
    m_db.releaseStatement(m_sql, m_stmt);  // a no-op on null
}

void Statement::fail(Error error)
{
    if (!m_error)
        m_error = std::move(error);
}

void Statement::check(int resultCode)
{
    if (resultCode != SQLITE_OK)
        fail(m_db.lastError());
}

int Statement::parameterIndex(const char *name)
{
    if (m_error)
        return 0;
    const int index = sqlite3_bind_parameter_index(m_stmt, name);
    if (index == 0) {
        fail(makeError(QStringLiteral("storage"),
                       QStringLiteral("statement has no parameter named %1: %2")
                           .arg(QString::fromUtf8(name),
                                QString::fromUtf8(sqlite3_sql(m_stmt)))));
    }
    return index;
}

void Statement::bind(int index, const QString &value)
{
    if (m_error)
        return;
    const QByteArray utf8 = value.toUtf8();
    check(sqlite3_bind_text64(m_stmt, index, nonNull(utf8.constData()),
                              static_cast<sqlite3_uint64>(utf8.size()), SQLITE_TRANSIENT,
                              SQLITE_UTF8));
}

void Statement::bind(int index, qint64 value)
{
    if (!m_error)
        check(sqlite3_bind_int64(m_stmt, index, value));
}

void Statement::bind(int index, int value)
{
    if (!m_error)
        check(sqlite3_bind_int(m_stmt, index, value));
}

void Statement::bind(int index, const QByteArray &value)
{
    if (!m_error) {
        check(sqlite3_bind_blob64(m_stmt, index, nonNull(value.constData()),
                                  static_cast<sqlite3_uint64>(value.size()), SQLITE_TRANSIENT));
    }
}

void Statement::bindNull(int index)
{
    if (!m_error)
        check(sqlite3_bind_null(m_stmt, index));
}

void Statement::bind(const char *name, const QString &value)
{
    if (const int index = parameterIndex(name))
        bind(index, value);
}

void Statement::bind(const char *name, qint64 value)
{
    if (const int index = parameterIndex(name))
        bind(index, value);
}

void Statement::bind(const char *name, int value)
{
    if (const int index = parameterIndex(name))
        bind(index, value);
}

void Statement::bind(const char *name, const QByteArray &value)
{
    if (const int index = parameterIndex(name))
        bind(index, value);
}

void Statement::bindNull(const char *name)
{
    if (const int index = parameterIndex(name))
        bindNull(index);
}

Result<bool> Statement::step()
{
    if (m_error)
        return *m_error;
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW)
        return true;
    if (rc == SQLITE_DONE)
        return false;
    fail(m_db.lastError());
    return *m_error;
}

Result<void> Statement::run()
{
    for (;;) {
        auto row = step();
        if (!row)
            return row.error();
        if (!*row)
            return {};
    }
}

void Statement::reset()
{
    if (m_prepareFailed)
        return;
    sqlite3_reset(m_stmt);
    m_error.reset();
}

bool Statement::isNull(int column) const
{
    return sqlite3_column_type(m_stmt, column) == SQLITE_NULL;
}

QString Statement::columnString(int column) const
{
    // text before bytes: the documented order, so the length is that of the UTF-8 form.
    const auto *text = reinterpret_cast<const char *>(sqlite3_column_text(m_stmt, column));
    return QString::fromUtf8(text, sqlite3_column_bytes(m_stmt, column));
}

qint64 Statement::columnInt64(int column) const
{
    return sqlite3_column_int64(m_stmt, column);
}

int Statement::columnInt(int column) const
{
    return sqlite3_column_int(m_stmt, column);
}

bool Statement::columnBool(int column) const
{
    return sqlite3_column_int(m_stmt, column) != 0;
}

QByteArray Statement::columnBlob(int column) const
{
    const auto *data = static_cast<const char *>(sqlite3_column_blob(m_stmt, column));
    return QByteArray(data, sqlite3_column_bytes(m_stmt, column));
}

} // namespace replhost::storage
