// SPDX-License-Identifier: Apache-2.0
#include "languagebadge.h"

#include <QHash>
#include <QPainter>
#include <QPixmap>

namespace replhost::gui {

namespace {

struct Badge {
    const char *shortName;
    QColor colour;
};

const QHash<QString, Badge> &badges()
{
    static const QHash<QString, Badge> table = {
        {QStringLiteral("python"), {"Py", QColor(0x30, 0x69, 0x98)}},
        {QStringLiteral("bash"), {"Sh", QColor(0x2e, 0x7d, 0x32)}},
        {QStringLiteral("javascript"), {"JS", QColor(0xb0, 0x8d, 0x00)}},
        {QStringLiteral("typescript"), {"TS", QColor(0x31, 0x78, 0xc6)}},
        {QStringLiteral("perl"), {"Pl", QColor(0x39, 0x45, 0x7e)}},
        {QStringLiteral("java"), {"Jv", QColor(0xb0, 0x40, 0x20)}},
        {QStringLiteral("go"), {"Go", QColor(0x00, 0x86, 0x9c)}},
    };
    return table;
}

QPixmap paintBadge(const QString &text, const QColor &colour, int size)
{
    QPixmap pixmap(size, size);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(Qt::NoPen);
    painter.setBrush(colour);
    painter.drawRoundedRect(QRectF(0.5, 0.5, size - 1, size - 1), size / 5.0, size / 5.0);
    QFont font = painter.font();
    font.setBold(true);
    font.setPixelSize(int(size * 0.5));
    painter.setFont(font);
    painter.setPen(Qt::white);
    painter.drawText(pixmap.rect(), Qt::AlignCenter, text);
    return pixmap;
}

} // namespace

QString LanguageBadge::shortName(const QString &languageId)
{
    const auto it = badges().constFind(languageId);
    if (it != badges().constEnd())
        return QString::fromLatin1(it->shortName);
    QString name = languageId.left(2);
    if (!name.isEmpty())
        name[0] = name[0].toUpper();
    return name;
}

QColor LanguageBadge::colour(const QString &languageId)
{
    const auto it = badges().constFind(languageId);
    return it != badges().constEnd() ? it->colour : QColor(0x75, 0x75, 0x75);
}

QIcon LanguageBadge::icon(const QString &languageId)
{
    static QHash<QString, QIcon> cache;
    auto it = cache.find(languageId);
    if (it == cache.end()) {
        QIcon icon;
        for (int size : {16, 24, 32, 48})
            icon.addPixmap(paintBadge(shortName(languageId), colour(languageId), size));
        it = cache.insert(languageId, icon);
    }
    return *it;
}

QColor LanguageBadge::stateColour(const QString &state)
{
    if (state == QLatin1String("idle"))
        return QColor(0x43, 0xa0, 0x47);
    if (state == QLatin1String("busy"))
        return QColor(0xf5, 0x9e, 0x0b);
    if (state == QLatin1String("starting") || state == QLatin1String("restoring"))
        return QColor(0x3b, 0x82, 0xf6);
    // Stopped on request, not failed: apart from an error's red.
    if (state == QLatin1String("interrupted"))
        return QColor(0x8b, 0x5c, 0xf6);
    if (state == QLatin1String("dead"))
        return QColor(0xdc, 0x26, 0x26);
    return QColor(0x9e, 0x9e, 0x9e);  // dormant, unknown
}

QIcon LanguageBadge::stateIcon(const QString &state)
{
    static QHash<QString, QIcon> cache;
    auto it = cache.find(state);
    if (it == cache.end()) {
        QIcon icon;
        for (int size : {12, 16, 24}) {
            QPixmap pixmap(size, size);
            pixmap.fill(Qt::transparent);
            QPainter painter(&pixmap);
            painter.setRenderHint(QPainter::Antialiasing);
            painter.setPen(Qt::NoPen);
            painter.setBrush(stateColour(state));
            const qreal margin = size * 0.22;
            painter.drawEllipse(QRectF(margin, margin, size - 2 * margin, size - 2 * margin));
            painter.end();
            icon.addPixmap(pixmap);
        }
        it = cache.insert(state, icon);
    }
    return *it;
}

} // namespace replhost::gui
