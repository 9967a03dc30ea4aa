// SPDX-License-Identifier: Apache-2.0
#pragma once

// Helpers shared by the storage tests.

#include <replhost/sdk/result.h>

#include <QByteArray>
#include <QString>
#include <QTest>

#include <sqlite3.h>

namespace replhost::storage::test {

template <typename T>
QByteArray describe(const Result<T> &result)
{
    return result.ok() ? QByteArray() : result.error().message.toUtf8();
}

// A second, raw connection to a database file, for what the Store API cannot or must not do:
// reading pragmas and writing rows by hand as an older or newer replhost would have.
class RawDatabase {
public:
    explicit RawDatabase(const QString &path)
    {
        if (sqlite3_open_v2(path.toUtf8().constData(), &m_db,
                            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
            qFatal("cannot open %s", qPrintable(path));
        }
        sqlite3_busy_timeout(m_db, 5000);
    }
    ~RawDatabase() { sqlite3_close_v2(m_db); }
    RawDatabase(const RawDatabase &) = delete;
    RawDatabase &operator=(const RawDatabase &) = delete;

    // Empty on success, SQLite's message otherwise.
    QString exec(const char *sql)
    {
        char *message = nullptr;
        if (sqlite3_exec(m_db, sql, nullptr, nullptr, &message) == SQLITE_OK)
            return QString();
        const QString error = QString::fromUtf8(message ? message : "error");
        sqlite3_free(message);
        return error;
    }

    // The first column of the first row, or a null QString if there is none.
    QString value(const char *sql)
    {
        sqlite3_stmt *stmt = nullptr;
        QString result;
        if (sqlite3_prepare_v2(m_db, sql, -1, &stmt, nullptr) == SQLITE_OK
            && sqlite3_step(stmt) == SQLITE_ROW) {
            const auto *text = reinterpret_cast<const char *>(sqlite3_column_text(stmt, 0));
            result = QString::fromUtf8(text ? text : "");
        }
        sqlite3_finalize(stmt);
        return result;
    }

private:
    sqlite3 *m_db = nullptr;
};

} // namespace replhost::storage::test

// Verifies that a Result is ok, printing its error otherwise.
#define QVERIFY_OK(expr)                                                                          \
    do {                                                                                          \
        const auto &result_ = (expr);                                                             \
        QVERIFY2(result_.ok(), ::replhost::storage::test::describe(result_).constData());        \
    } while (false)

// Verifies that a Result failed with the given error code.
#define QVERIFY_ERROR(expr, errorCode)                                                            \
    do {                                                                                          \
        const auto &result_ = (expr);                                                             \
        QVERIFY2(!result_.ok(), "expected an error");                                             \
        QCOMPARE(result_.error().code, QStringLiteral(errorCode));                                \
    } while (false)
