// SPDX-License-Identifier: Apache-2.0
#include "jsontext.h"

#include "jsonwriter.h"

namespace replhost::core {

void JsonText::appendString(QByteArray &out, QStringView text)
{
    JsonWriter writer(std::move(out));
    writer.string(text);
    out = writer.take();
}

void JsonText::appendValue(QByteArray &out, const QJsonValue &value)
{
    JsonWriter writer(std::move(out));
    writer.value(value);
    out = writer.take();
}

void JsonText::appendEvent(QByteArray &out, const sdk::Event &event)
{
    JsonWriter writer(std::move(out));
    writer.event(event);
    out = writer.take();
}

QByteArray JsonText::event(const sdk::Event &event)
{
    JsonWriter writer;
    writer.event(event);
    return writer.take();
}

} // namespace replhost::core
