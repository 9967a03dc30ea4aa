// SPDX-License-Identifier: Apache-2.0
#include "jsonbody.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QJsonValue>

#include <cmath>

namespace replhost::http {

namespace {

Error bad(const QString &message)
{
    return makeError(QStringLiteral("bad_request"), message);
}

QString typeName(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Null: return QStringLiteral("null");
    case QJsonValue::Bool: return QStringLiteral("a boolean");
    case QJsonValue::Double: return QStringLiteral("a number");
    case QJsonValue::String: return QStringLiteral("a string");
    case QJsonValue::Array: return QStringLiteral("an array");
    case QJsonValue::Object: return QStringLiteral("an object");
    case QJsonValue::Undefined: break;
    }
    return QStringLiteral("undefined");
}

} // namespace

Result<JsonBody> JsonBody::parse(const QByteArray &body, bool emptyIsObject)
{
    if (body.trimmed().isEmpty()) {
        if (emptyIsObject)
            return JsonBody(QJsonObject());
        return bad(QStringLiteral("the request body must be a JSON object"));
    }
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(body, &error);
    if (error.error != QJsonParseError::NoError) {
        return bad(QStringLiteral("the request body is not valid JSON: %1 at offset %2")
                           .arg(error.errorString())
                           .arg(error.offset));
    }
    if (!document.isObject())
        return bad(QStringLiteral("the request body must be a JSON object"));
    return JsonBody(document.object());
}

bool JsonBody::has(const QString &field) const
{
    const QJsonValue value = m_object.value(field);
    return !value.isUndefined() && !value.isNull();
}

Result<QString> JsonBody::requiredString(const QString &field) const
{
    const QJsonValue value = m_object.value(field);
    if (!value.isString()) {
        return bad(has(field) ? QStringLiteral("field '%1' must be a string, not %2")
                                        .arg(field, typeName(value))
                              : QStringLiteral("field '%1' is required (a string)").arg(field));
    }
    return value.toString();
}

Result<QString> JsonBody::optionalString(const QString &field) const
{
    if (!has(field))
        return QString();
    const QJsonValue value = m_object.value(field);
    if (!value.isString())
        return bad(QStringLiteral("field '%1' must be a string, not %2").arg(field, typeName(value)));
    return value.toString();
}

Result<QJsonObject> JsonBody::optionalObject(const QString &field) const
{
    if (!has(field))
        return QJsonObject();
    const QJsonValue value = m_object.value(field);
    if (!value.isObject())
        return bad(QStringLiteral("field '%1' must be an object, not %2").arg(field, typeName(value)));
    return value.toObject();
}

Result<QMap<QString, QString>> JsonBody::stringMap(const QString &field) const
{
    QMap<QString, QString> map;
    if (!has(field))
        return map;
    const QJsonValue value = m_object.value(field);
    if (!value.isObject()) {
        return bad(QStringLiteral("field '%1' must be an object of strings, not %2")
                           .arg(field, typeName(value)));
    }
    const QJsonObject object = value.toObject();
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!it.value().isString()) {
            return bad(QStringLiteral("field '%1' must be an object of strings; '%2' is %3")
                               .arg(field, it.key(), typeName(it.value())));
        }
        map.insert(it.key(), it.value().toString());
    }
    return map;
}

Result<QStringList> JsonBody::stringList(const QString &field) const
{
    QStringList list;
    if (!has(field))
        return list;
    const QJsonValue value = m_object.value(field);
    if (!value.isArray()) {
        return bad(QStringLiteral("field '%1' must be an array of strings, not %2")
                           .arg(field, typeName(value)));
    }
    const QJsonArray array = value.toArray();
    for (qsizetype i = 0; i < array.size(); ++i) {
        if (!array[i].isString()) {
            return bad(QStringLiteral("field '%1' must be an array of strings; item %2 is %3")
                               .arg(field).arg(i).arg(typeName(array[i])));
        }
        list.append(array[i].toString());
    }
    return list;
}

Result<bool> JsonBody::optionalBool(const QString &field, bool fallback) const
{
    if (!has(field))
        return fallback;
    const QJsonValue value = m_object.value(field);
    if (!value.isBool())
        return bad(QStringLiteral("field '%1' must be true or false, not %2").arg(field, typeName(value)));
    return value.toBool();
}

Result<int> JsonBody::optionalInt(const QString &field, int fallback, int min, int max) const
{
    if (!has(field))
        return fallback;
    const QJsonValue value = m_object.value(field);
    const double number = value.toDouble();
    if (!value.isDouble() || std::trunc(number) != number || number < min || number > max) {
        return bad(QStringLiteral("field '%1' must be an integer from %2 to %3")
                           .arg(field).arg(min).arg(max));
    }
    return int(number);
}

} // namespace replhost::http
