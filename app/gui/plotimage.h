// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QImage>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>

class QMenu;
class QWidget;

namespace replhost::gui {

// One image a run showed (a figure, a picture), with every form its MIME bundle carried: PNG,
// JPEG, SVG, PDF. It can be drawn, copied and saved as what it carries — PNG always (the raster
// itself, or the SVG or JPEG drawn at its own size), SVG when the bundle has SVG, PDF when it
// has a PDF or an SVG (drawn as vectors). A plain value; GUI thread only (it draws with QtGui).
class PlotImage {
public:
    // The image of a display or result bundle; nullopt when the bundle carries none that loads.
    static std::optional<PlotImage> fromBundle(const QJsonObject &data);

    // The picture at its own size (an SVG at its default size, times `devicePixelRatio`).
    QImage image(qreal devicePixelRatio = 1.0) const;
    // Its size in device-independent pixels.
    QSize size() const;
    bool hasSvg() const { return !m_svg.isEmpty(); }
    bool hasPdf() const { return !m_pdf.isEmpty(); }

    // The formats save() writes, as file suffixes: "png" first, then "svg" and "pdf" when
    // carried (see above).
    QStringList saveFormats() const;
    // Writes the image to `path` in `format` (one of saveFormats()). False, with `error` set,
    // when it cannot.
    bool save(const QString &path, const QString &format, QString *error = nullptr) const;
    // Puts the picture (and its SVG text, when carried) on the clipboard.
    void copyToClipboard() const;

    // Adds "Save Image As…", "Copy Image" and "Zoom…" to `menu`, acting on a copy of this image
    // with dialogs parented to `parent`.
    void addActions(QMenu *menu, QWidget *parent, const QString &suggestedName) const;
    // Asks for a file name and a format (by the chosen suffix) and saves; false when nothing
    // was written. `parent` shows the dialog and any error.
    bool saveWithDialog(QWidget *parent, const QString &suggestedName) const;
    // Shows the image in a window of its own that zooms (see ImageViewer).
    void showZoomed(QWidget *parent, const QString &title) const;

private:
    QByteArray m_png, m_jpeg, m_svg, m_pdf;
    QImage m_raster;  // decoded PNG or JPEG; null for an SVG-only image
    QSize m_svgSize;
};

} // namespace replhost::gui
