// SPDX-License-Identifier: Apache-2.0
#include "actionicons.h"

#include <QPainter>
#include <QPainterPath>
#include <QPixmap>

#include <functional>

namespace replhost::gui {

namespace {

// Paints `shape` (in a 16×16 design grid) at the sizes toolbars and menus ask for.
QIcon paintedIcon(const QColor &fill, const std::function<QPainterPath()> &shape)
{
    QIcon icon;
    for (const int size : {16, 24, 32, 48}) {
        QPixmap pixmap(size, size);
        pixmap.fill(Qt::transparent);
        QPainter painter(&pixmap);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.scale(size / 16.0, size / 16.0);
        painter.setPen(QPen(fill.darker(130), 0.8));
        painter.setBrush(fill);
        painter.drawPath(shape());
        icon.addPixmap(pixmap);
    }
    return icon;
}

} // namespace

QIcon ActionIcons::run()
{
    static const QIcon icon = paintedIcon(QColor(0x2e, 0xa0, 0x43), [] {
        QPainterPath path;
        path.moveTo(4, 2.5);
        path.lineTo(13.5, 8);
        path.lineTo(4, 13.5);
        path.closeSubpath();
        return path;
    });
    return icon;
}

QIcon ActionIcons::interrupt()
{
    static const QIcon icon = paintedIcon(QColor(0xd9, 0x48, 0x3b), [] {
        QPainterPath path;
        path.addRoundedRect(QRectF(3, 3, 10, 10), 1.5, 1.5);
        return path;
    });
    return icon;
}

} // namespace replhost::gui
