// SPDX-License-Identifier: Apache-2.0
#include "plotimage.h"

#include "imageviewer.h"

#include <QApplication>
#include <QBuffer>
#include <QClipboard>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgRenderer>

namespace replhost::gui {

namespace {

QByteArray base64Member(const QJsonObject &data, const char *mime)
{
    const QJsonValue value = data.value(QLatin1String(mime));
    return value.isString() ? QByteArray::fromBase64(value.toString().toLatin1()) : QByteArray();
}

bool writeFile(const QString &path, const QByteArray &bytes, QString *error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
        if (error)
            *error = file.errorString();
        return false;
    }
    return true;
}

} // namespace

std::optional<PlotImage> PlotImage::fromBundle(const QJsonObject &data)
{
    PlotImage plot;
    plot.m_png = base64Member(data, "image/png");
    plot.m_jpeg = base64Member(data, "image/jpeg");
    plot.m_pdf = base64Member(data, "application/pdf");
    if (const QJsonValue svg = data.value(QLatin1String("image/svg+xml")); svg.isString()) {
        QSvgRenderer renderer(svg.toString().toUtf8());
        if (renderer.isValid()) {
            plot.m_svg = svg.toString().toUtf8();
            plot.m_svgSize = renderer.defaultSize().isEmpty() ? QSize(400, 300) : renderer.defaultSize();
        }
    }
    if (!plot.m_png.isEmpty())
        plot.m_raster = QImage::fromData(plot.m_png, "PNG");
    if (plot.m_raster.isNull() && !plot.m_jpeg.isEmpty())
        plot.m_raster = QImage::fromData(plot.m_jpeg, "JPEG");
    if (plot.m_raster.isNull()) {
        plot.m_png.clear();
        plot.m_jpeg.clear();
    }
    if (plot.m_raster.isNull() && plot.m_svg.isEmpty())
        return std::nullopt;
    return plot;
}

QSize PlotImage::size() const
{
    return m_raster.isNull() ? m_svgSize : m_raster.size();
}

QImage PlotImage::image(qreal devicePixelRatio) const
{
    if (!m_raster.isNull())
        return m_raster;
    QSvgRenderer renderer(m_svg);
    QImage drawn(m_svgSize * devicePixelRatio, QImage::Format_ARGB32_Premultiplied);
    drawn.setDevicePixelRatio(devicePixelRatio);
    drawn.fill(Qt::transparent);
    QPainter painter(&drawn);
    renderer.render(&painter, QRectF(QPointF(0, 0), QSizeF(m_svgSize)));
    return drawn;
}

QStringList PlotImage::saveFormats() const
{
    QStringList formats{QStringLiteral("png")};
    if (hasSvg())
        formats << QStringLiteral("svg");
    if (hasPdf() || hasSvg())
        formats << QStringLiteral("pdf");
    return formats;
}

bool PlotImage::save(const QString &path, const QString &format, QString *error) const
{
    if (!saveFormats().contains(format)) {
        if (error)
            *error = QObject::tr("this image carries no %1").arg(format.toUpper());
        return false;
    }
    if (format == QLatin1String("png")) {
        if (!m_png.isEmpty())
            return writeFile(path, m_png, error);
        QByteArray bytes;
        QBuffer buffer(&bytes);
        buffer.open(QIODevice::WriteOnly);
        image().save(&buffer, "PNG");
        return writeFile(path, bytes, error);
    }
    if (format == QLatin1String("svg"))
        return writeFile(path, m_svg, error);
    if (!m_pdf.isEmpty())
        return writeFile(path, m_pdf, error);
    // An SVG drawn into a PDF page of its own size stays vector graphics.
    QByteArray bytes;
    {
        QBuffer buffer(&bytes);
        buffer.open(QIODevice::WriteOnly);
        QPdfWriter pdf(&buffer);
        pdf.setResolution(72);
        pdf.setPageMargins(QMarginsF());
        pdf.setPageSize(QPageSize(QSizeF(m_svgSize), QPageSize::Point));
        QPainter painter(&pdf);
        QSvgRenderer(m_svg).render(&painter, QRectF(QPointF(0, 0), QSizeF(m_svgSize)));
    }
    return writeFile(path, bytes, error);
}

void PlotImage::copyToClipboard() const
{
    auto *mime = new QMimeData;
    mime->setImageData(image());
    if (hasSvg())
        mime->setData(QStringLiteral("image/svg+xml"), m_svg);
    QGuiApplication::clipboard()->setMimeData(mime);
}

bool PlotImage::saveWithDialog(QWidget *parent, const QString &suggestedName) const
{
    QStringList filters;
    for (const QString &format : saveFormats())
        filters << QObject::tr("%1 image (*.%2)").arg(format.toUpper(), format);
    QString chosenFilter = filters.first();
    QString path = QFileDialog::getSaveFileName(parent, QObject::tr("Save Image As"),
                                                suggestedName + QStringLiteral(".png"),
                                                filters.join(QStringLiteral(";;")), &chosenFilter);
    if (path.isEmpty())
        return false;
    QString format = QFileInfo(path).suffix().toLower();
    if (!saveFormats().contains(format)) {
        format = saveFormats().at(qMax(0, int(filters.indexOf(chosenFilter))));
        path += QLatin1Char('.') + format;
    }
    QString error;
    if (!save(path, format, &error)) {
        QMessageBox::warning(parent, QObject::tr("Save Image As"),
                             QObject::tr("Cannot write %1: %2").arg(path, error));
        return false;
    }
    return true;
}

void PlotImage::showZoomed(QWidget *parent, const QString &title) const
{
    auto *viewer = new ImageViewer(image(parent ? parent->devicePixelRatioF() : 1.0), title, parent);
    viewer->setAttribute(Qt::WA_DeleteOnClose);
    viewer->show();
}

void PlotImage::addActions(QMenu *menu, QWidget *parent, const QString &suggestedName) const
{
    const PlotImage copy = *this;
    QAction *save = menu->addAction(QObject::tr("Save Image As…"), parent,
                                    [copy, parent, suggestedName] { copy.saveWithDialog(parent, suggestedName); });
    save->setObjectName(QStringLiteral("saveImage"));
    save->setToolTip(QObject::tr("Save as %1").arg(saveFormats().join(QStringLiteral(", ")).toUpper()));
    QAction *copyAction = menu->addAction(QObject::tr("Copy Image"), parent, [copy] { copy.copyToClipboard(); });
    copyAction->setObjectName(QStringLiteral("copyImage"));
    QAction *zoom = menu->addAction(QObject::tr("Zoom…"), parent,
                                    [copy, parent, suggestedName] { copy.showZoomed(parent, suggestedName); });
    zoom->setObjectName(QStringLiteral("zoomImage"));
}

} // namespace replhost::gui
