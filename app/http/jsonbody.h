// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <QByteArray>
#include <QJsonObject>
#include <QMap>
#include <QString>
#include <QStringList>

namespace replhost::http {

// A request body that must be a JSON object, read field by field with errors that name the
// field ("field 'env' must be an object of strings; 'A' is a number"). JSON null counts as an
// absent field, so clients may send {"cwd": null}. Unknown fields are ignored.
//
// Errors: "bad_request". Threading: a value; no shared state.
class JsonBody {
public:
    // `emptyIsObject`: an empty body counts as {} (routes whose fields are all optional).
    static Result<JsonBody> parse(const QByteArray &body, bool emptyIsObject = false);

    bool has(const QString &field) const;
    const QJsonObject &object() const { return m_object; }

    Result<QString> requiredString(const QString &field) const;
    Result<QString> optionalString(const QString &field) const;
    // Absent → empty map.
    Result<QMap<QString, QString>> stringMap(const QString &field) const;
    // Absent → empty object; must be an object (its contents are the caller's to check).
    Result<QJsonObject> optionalObject(const QString &field) const;
    // Absent → empty list.
    Result<QStringList> stringList(const QString &field) const;
    // Absent → `fallback`; must be true or false.
    Result<bool> optionalBool(const QString &field, bool fallback) const;
    // Absent → `fallback`; must be an integer in [min, max].
    Result<int> optionalInt(const QString &field, int fallback, int min, int max) const;

private:
    explicit JsonBody(QJsonObject object) : m_object(std::move(object)) {}
    QJsonObject m_object;
};

} // namespace replhost::http
