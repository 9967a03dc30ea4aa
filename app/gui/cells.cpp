// SPDX-License-Identifier: Apache-2.0
#include "cells.h"

namespace replhost::gui::Cells {

QString commentPrefix(const QString &lexerHint)
{
    static const QStringList hash{QStringLiteral("python"), QStringLiteral("bash"), QStringLiteral("sh"),
                                  QStringLiteral("perl"), QStringLiteral("ruby"), QStringLiteral("r")};
    static const QStringList slashes{QStringLiteral("javascript"), QStringLiteral("js"), QStringLiteral("typescript"),
                                     QStringLiteral("java"), QStringLiteral("go"), QStringLiteral("cpp"),
                                     QStringLiteral("c")};
    if (hash.contains(lexerHint))
        return QStringLiteral("#");
    if (slashes.contains(lexerHint))
        return QStringLiteral("//");
    return QString();
}

bool isMarker(QStringView line, const QString &commentPrefix)
{
    if (commentPrefix.isEmpty())
        return false;
    const QStringView trimmed = line.trimmed();
    if (!trimmed.startsWith(commentPrefix))
        return false;
    const QStringView rest = trimmed.mid(commentPrefix.size()).trimmed();
    if (rest.startsWith(u"%%"))
        return true;
    // "In[ ]", "In[12]:", "In [3]"
    if (!rest.startsWith(u"In"))
        return false;
    const QStringView bracket = rest.mid(2).trimmed();
    if (!bracket.startsWith(u'['))
        return false;
    const qsizetype close = bracket.indexOf(u']');
    if (close < 0)
        return false;
    for (const QChar c : bracket.mid(1, close - 1)) {
        if (!c.isDigit() && !c.isSpace())
            return false;
    }
    return true;
}

QList<Cell> split(const QStringList &lines, const QString &commentPrefix)
{
    QList<Cell> cells;
    for (int i = 0; i < lines.size(); ++i) {
        if (!isMarker(lines.at(i), commentPrefix))
            continue;
        if (!cells.isEmpty())
            cells.last().last = i - 1;
        else if (i > 0)
            cells.append(Cell{0, i - 1, false});
        cells.append(Cell{i, i, true});
    }
    const int lastLine = qMax(0, int(lines.size()) - 1);
    if (cells.isEmpty())
        return {Cell{0, lastLine, false}};
    cells.last().last = lastLine;
    return cells;
}

Cell at(const QList<Cell> &cells, int line)
{
    for (const Cell &cell : cells) {
        if (line >= cell.first && line <= cell.last)
            return cell;
    }
    return cells.isEmpty() ? Cell{} : cells.last();
}

} // namespace replhost::gui::Cells
