// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace replhost::http {

// The few JSON Schema shapes (draft 2020-12, MCP's default) the MCP tools declare their input
// and output with, so that every schema is written the same way.
//
// Threading: pure functions; any thread.
class McpSchema {
public:
    McpSchema() = delete;

    // {"type": <type>} with a description when one is given. `type` may be a list, for
    // example {"string", "null"}.
    static QJsonObject of(const QStringList &type, const QString &description = {});
    static QJsonObject string(const QString &description = {}) { return of({QStringLiteral("string")}, description); }
    static QJsonObject nullableString(const QString &description = {})
    {
        return of({QStringLiteral("string"), QStringLiteral("null")}, description);
    }
    static QJsonObject integer(const QString &description, int minimum, int maximum);
    static QJsonObject enumeration(const QStringList &values, const QString &description = {});
    static QJsonObject arrayOf(const QJsonObject &items, const QString &description = {});
    // An object whose values are all strings (an environment).
    static QJsonObject stringMap(const QString &description);
    static QJsonObject object(const QJsonObject &properties, const QStringList &required = {},
                              const QString &description = {});
};

} // namespace replhost::http
