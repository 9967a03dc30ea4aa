// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QDialog>
#include <QImage>

class QLabel;
class QScrollArea;

namespace replhost::gui {

// An image in a window of its own that zooms: it opens fitted to the window (never enlarged),
// Ctrl+wheel, Ctrl++ and Ctrl+- zoom, Ctrl+0 shows it at its own size, and "Fit" fits it again.
//
// Ownership: a QDialog with a parent. GUI thread only.
class ImageViewer : public QDialog {
    Q_OBJECT
public:
    ImageViewer(const QImage &image, const QString &title, QWidget *parent = nullptr);

    // The shown size over the image's own size.
    qreal zoom() const { return m_zoom; }
    void setZoom(qreal zoom);
    void fitToWindow();

protected:
    void wheelEvent(QWheelEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    QImage m_image;
    qreal m_zoom = 1.0;
    bool m_fitting = true;
    QScrollArea *m_area;
    QLabel *m_label;
    QLabel *m_zoomLabel;
};

} // namespace replhost::gui
