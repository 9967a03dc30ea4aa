// SPDX-License-Identifier: Apache-2.0
#include "imageviewer.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QShortcut>
#include <QVBoxLayout>
#include <QWheelEvent>

namespace replhost::gui {

namespace {
constexpr qreal kMinZoom = 0.05;
constexpr qreal kMaxZoom = 16.0;
constexpr qreal kStep = 1.25;
} // namespace

ImageViewer::ImageViewer(const QImage &image, const QString &title, QWidget *parent)
    : QDialog(parent)
    , m_image(image)
    , m_area(new QScrollArea(this))
    , m_label(new QLabel(this))
    , m_zoomLabel(new QLabel(this))
{
    setObjectName(QStringLiteral("imageViewer"));
    setWindowTitle(title.isEmpty() ? tr("Image") : title);
    m_label->setAlignment(Qt::AlignCenter);
    m_area->setWidget(m_label);
    m_area->setWidgetResizable(false);
    m_area->setAlignment(Qt::AlignCenter);

    auto *fit = new QPushButton(tr("Fit"), this);
    auto *actual = new QPushButton(tr("100%"), this);
    auto *zoomIn = new QPushButton(tr("Zoom In"), this);
    auto *zoomOut = new QPushButton(tr("Zoom Out"), this);
    connect(fit, &QPushButton::clicked, this, &ImageViewer::fitToWindow);
    connect(actual, &QPushButton::clicked, this, [this] { setZoom(1.0); });
    connect(zoomIn, &QPushButton::clicked, this, [this] { setZoom(m_zoom * kStep); });
    connect(zoomOut, &QPushButton::clicked, this, [this] { setZoom(m_zoom / kStep); });
    new QShortcut(QKeySequence::ZoomIn, this, [this] { setZoom(m_zoom * kStep); });
    new QShortcut(QKeySequence::ZoomOut, this, [this] { setZoom(m_zoom / kStep); });
    new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_0), this, [this] { setZoom(1.0); });

    auto *bar = new QHBoxLayout;
    bar->addWidget(fit);
    bar->addWidget(actual);
    bar->addWidget(zoomOut);
    bar->addWidget(zoomIn);
    bar->addStretch(1);
    bar->addWidget(m_zoomLabel);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_area, 1);

    const QSize own = (QSizeF(m_image.size()) / m_image.devicePixelRatio()).toSize();
    resize(own.boundedTo(QSize(1100, 800)).expandedTo(QSize(420, 320)) + QSize(40, 80));
    fitToWindow();
}

void ImageViewer::setZoom(qreal zoom)
{
    m_fitting = false;
    m_zoom = qBound(kMinZoom, zoom, kMaxZoom);
    const QSizeF own = QSizeF(m_image.size()) / m_image.devicePixelRatio();
    const QSize shown = (own * m_zoom).toSize().expandedTo(QSize(1, 1));
    QPixmap pixmap = QPixmap::fromImage(m_image.scaled(shown * devicePixelRatioF(), Qt::KeepAspectRatio,
                                                       Qt::SmoothTransformation));
    pixmap.setDevicePixelRatio(devicePixelRatioF());
    m_label->setPixmap(pixmap);
    m_label->resize(shown);
    m_zoomLabel->setText(tr("%1%").arg(qRound(m_zoom * 100)));
}

void ImageViewer::fitToWindow()
{
    const QSizeF own = QSizeF(m_image.size()) / m_image.devicePixelRatio();
    const QSize room = m_area->viewport()->size() - QSize(4, 4);
    qreal zoom = 1.0;
    if (own.width() > 0 && own.height() > 0)
        zoom = qMin<qreal>(1.0, qMin(room.width() / own.width(), room.height() / own.height()));
    setZoom(zoom);
    m_fitting = true;
}

void ImageViewer::wheelEvent(QWheelEvent *event)
{
    if (event->modifiers() & Qt::ControlModifier) {
        setZoom(event->angleDelta().y() > 0 ? m_zoom * kStep : m_zoom / kStep);
        event->accept();
        return;
    }
    QDialog::wheelEvent(event);
}

void ImageViewer::resizeEvent(QResizeEvent *event)
{
    QDialog::resizeEvent(event);
    if (m_fitting)
        fitToWindow();
}

} // namespace replhost::gui
