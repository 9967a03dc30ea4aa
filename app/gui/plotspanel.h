// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "plotimage.h"

#include "engineclient.h"

#include <QList>
#include <QSet>
#include <QWidget>

class QLabel;
class QListWidget;
class QPushButton;

namespace replhost::gui {

// Every image the selected context produced — figures and pictures its runs displayed or
// returned — newest first, as a strip of thumbnails under the selected plot, drawn as large as
// the panel allows: from its history (the last kExecutionsScanned runs)
// and, live, from the runs the window follows. An updated display is one plot, shown as it is
// now. The selected plot can be saved as what it carries (PNG, SVG, PDF; see PlotImage), copied
// and zoomed; a double click zooms, the context menu offers the same.
//
// Ownership: a QWidget in its parent's tree; the engine client must outlive it. GUI thread only.
class PlotsPanel : public QWidget {
    Q_OBJECT
public:
    static constexpr int kExecutionsScanned = 50;
    static constexpr int kThumbnailSize = 96;

    PlotsPanel(EngineClient &engine, QWidget *parent = nullptr);

    void setContext(const QString &workspace, const QString &contextId);
    // A run of the context: its images so far, and those it shows later.
    void noteExecution(const core::ExecutionPtr &execution);

    int count() const;
    // Newest first.
    const PlotImage &plot(int row) const;
    QString plotTitle(int row) const;
    QListWidget *list() const { return m_list; }
    // The selected plot as drawn above the strip (null pixmap when there is none).
    QPixmap preview() const;
    int currentRow() const;

signals:
    void countChanged(int count);

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    struct Entry {
        PlotImage plot;
        QString executionId;
        QString displayId;  // empty: not updatable
        QString title;
        QString fileName;  // suggested, without a suffix
    };
    // Adds (or, for an update of a display, replaces) the image of one event.
    void addEvent(const QString &executionId, int executionCount, const sdk::Event &event, bool live);
    void rebuildList();
    void updateButtons();
    void showPreview();

    EngineClient &m_engine;
    quint64 m_generation = 0;  // of the last setContext(): older answers are dropped
    QString m_workspace, m_contextId;
    QList<Entry> m_entries;  // newest first
    QSet<QString> m_noted;  // executions followed live
    QList<QMetaObject::Connection> m_connections;
    QLabel *m_preview;
    QListWidget *m_list;
    QPushButton *m_save, *m_copy, *m_zoom;
    QLabel *m_summary;
};

} // namespace replhost::gui
