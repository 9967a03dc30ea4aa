// SPDX-License-Identifier: Apache-2.0
#include "mcpschema.h"

namespace replhost::http {

QJsonObject McpSchema::of(const QStringList &type, const QString &description)
{
    QJsonObject schema{{QStringLiteral("type"),
                        type.size() == 1 ? QJsonValue(type.first()) : QJsonValue(QJsonArray::fromStringList(type))}};
    if (!description.isEmpty())
        schema.insert(QStringLiteral("description"), description);
    return schema;
}

QJsonObject McpSchema::integer(const QString &description, int minimum, int maximum)
{
    QJsonObject schema = of({QStringLiteral("integer")}, description);
    schema.insert(QStringLiteral("minimum"), minimum);
    schema.insert(QStringLiteral("maximum"), maximum);
    return schema;
}

QJsonObject McpSchema::enumeration(const QStringList &values, const QString &description)
{
    QJsonObject schema = string(description);
    schema.insert(QStringLiteral("enum"), QJsonArray::fromStringList(values));
    return schema;
}

QJsonObject McpSchema::arrayOf(const QJsonObject &items, const QString &description)
{
    QJsonObject schema = of({QStringLiteral("array")}, description);
    schema.insert(QStringLiteral("items"), items);
    return schema;
}

QJsonObject McpSchema::stringMap(const QString &description)
{
    QJsonObject schema = of({QStringLiteral("object")}, description);
    schema.insert(QStringLiteral("additionalProperties"), string());
    return schema;
}

QJsonObject McpSchema::object(const QJsonObject &properties, const QStringList &required,
                              const QString &description)
{
    QJsonObject schema = of({QStringLiteral("object")}, description);
    schema.insert(QStringLiteral("properties"), properties);
    if (!required.isEmpty())
        schema.insert(QStringLiteral("required"), QJsonArray::fromStringList(required));
    return schema;
}

} // namespace replhost::http
