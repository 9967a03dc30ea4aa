// SPDX-License-Identifier: Apache-2.0
#pragma once
// Text put into the code a test runs: as a Python string literal or as one shell word, whatever
// it holds (quotes, newlines, non-ASCII).

#include <QJsonArray>
#include <QJsonDocument>
#include <QString>

namespace replhost::testing {

// `text` as a Python string literal (JSON's string syntax is a subset of Python's).
inline QString pythonString(const QString &text)
{
    return QString::fromUtf8(QJsonDocument(QJsonArray{text}).toJson(QJsonDocument::Compact))
        .mid(1)
        .chopped(1);
}

// `text` as one single-quoted shell word.
inline QString shellWord(QString text)
{
    return QLatin1Char('\'') + text.replace(QLatin1Char('\''), QLatin1String("'\\''"))
           + QLatin1Char('\'');
}

} // namespace replhost::testing
