// SPDX-License-Identifier: Apache-2.0
#include "replhost/sdk/event.h"

#include <QHash>

namespace replhost::sdk {

namespace {

Event make(Event::Kind kind, QString type, const QString &executionId, QJsonObject fields)
{
    Event e;
    e.kind = kind;
    e.type = std::move(type);
    e.executionId = executionId;
    e.fields = std::move(fields);
    return e;
}

const QString kExecutionId = QStringLiteral("execution_id");
const QString kType = QStringLiteral("type");

} // namespace

Event Event::started(const QString &executionId, int executionCount)
{
    // A copy of a made object with its one value replaced: building the object from a list
    // makes and inserts the key on every run, at several times the cost. Copies of a const
    // shared object are safe from any thread (the reference count is atomic).
    static const QJsonObject prototype{{QStringLiteral("execution_count"), 0}};
    QJsonObject fields = prototype;
    *fields.begin() = executionCount;
    return make(Kind::Started, QStringLiteral("started"), executionId, std::move(fields));
}

Event Event::stream(const QString &executionId, const QString &name, const QString &text)
{
    return make(Kind::Stream, QStringLiteral("stream"), executionId,
                {{QStringLiteral("name"), name}, {QStringLiteral("text"), text}});
}

Event Event::display(const QString &executionId, const QJsonObject &data,
                     const QJsonObject &metadata)
{
    return make(Kind::Display, QStringLiteral("display"), executionId,
                {{QStringLiteral("data"), data}, {QStringLiteral("metadata"), metadata}});
}

Event Event::display(const QString &executionId, const QJsonObject &data,
                     const QJsonObject &metadata, const QString &displayId, bool update)
{
    Event e = display(executionId, data, metadata);
    if (!displayId.isEmpty()) {
        e.fields.insert(QStringLiteral("display_id"), displayId);
        if (update)
            e.fields.insert(QStringLiteral("update"), true);
    }
    return e;
}

Event Event::clearOutput(const QString &executionId, bool wait)
{
    return make(Kind::ClearOutput, QStringLiteral("clear_output"), executionId,
                {{QStringLiteral("wait"), wait}});
}

Event Event::inputRequest(const QString &executionId, const QString &prompt, bool password)
{
    return make(Kind::InputRequest, QStringLiteral("input_request"), executionId,
                {{QStringLiteral("prompt"), prompt}, {QStringLiteral("password"), password}});
}

Event Event::result(const QString &executionId, int executionCount, const QJsonObject &data,
                    const QJsonObject &metadata)
{
    return make(Kind::Result, QStringLiteral("result"), executionId,
                {{QStringLiteral("execution_count"), executionCount},
                 {QStringLiteral("data"), data},
                 {QStringLiteral("metadata"), metadata}});
}

Event Event::error(const QString &executionId, const QString &ename, const QString &evalue,
                   const QStringList &traceback)
{
    return make(Kind::Error, QStringLiteral("error"), executionId,
                {{QStringLiteral("ename"), ename},
                 {QStringLiteral("evalue"), evalue},
                 {QStringLiteral("traceback"), QJsonArray::fromStringList(traceback)}});
}

Event Event::done(const QString &executionId, const QString &status, const QJsonObject &extra)
{
    QJsonObject fields = extra;
    fields.insert(QStringLiteral("status"), status);
    // Every Done says whether state survived and whether the output is complete; a Done made
    // without saying so is the ordinary case.
    if (!fields.contains(QStringLiteral("state_lost")))
        fields.insert(QStringLiteral("state_lost"), false);
    if (!fields.contains(QStringLiteral("streams_synced")))
        fields.insert(QStringLiteral("streams_synced"), true);
    return make(Kind::Done, QStringLiteral("done"), executionId, std::move(fields));
}

Event Event::other(const QString &executionId, const QString &type, const QJsonObject &fields)
{
    return make(kindFromType(type), type, executionId, fields);
}

Event::Kind Event::kindFromType(const QString &type)
{
    static const QHash<QString, Kind> kinds = {
        {QStringLiteral("started"), Kind::Started}, {QStringLiteral("stream"), Kind::Stream},
        {QStringLiteral("display"), Kind::Display}, {QStringLiteral("result"), Kind::Result},
        {QStringLiteral("error"), Kind::Error},     {QStringLiteral("done"), Kind::Done},
        {QStringLiteral("clear_output"), Kind::ClearOutput},
        {QStringLiteral("input_request"), Kind::InputRequest},
    };
    return kinds.value(type, Kind::Other);
}

QJsonObject Event::toJson() const
{
    QJsonObject json = fields;
    json.insert(kType, type);
    json.insert(kExecutionId, executionId.isEmpty() ? QJsonValue(QJsonValue::Null)
                                                    : QJsonValue(executionId));
    return json;
}

Event Event::fromJson(const QJsonObject &json)
{
    Event e;
    e.type = json.value(kType).toString();
    e.kind = kindFromType(e.type);
    e.executionId = json.value(kExecutionId).toString();
    e.fields = json;
    e.fields.remove(kType);
    e.fields.remove(kExecutionId);
    return e;
}

} // namespace replhost::sdk
