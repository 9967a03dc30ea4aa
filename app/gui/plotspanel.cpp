// SPDX-License-Identifier: Apache-2.0
#include "plotspanel.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QPointer>
#include <QPushButton>
#include <QScrollBar>
#include <QVBoxLayout>

namespace replhost::gui {

using sdk::Event;

PlotsPanel::PlotsPanel(EngineClient &engine, QWidget *parent)
    : QWidget(parent)
    , m_engine(engine)
    , m_preview(new QLabel(this))
    , m_list(new QListWidget(this))
    , m_save(new QPushButton(tr("Save…"), this))
    , m_copy(new QPushButton(tr("Copy"), this))
    , m_zoom(new QPushButton(tr("Zoom"), this))
    , m_summary(new QLabel(this))
{
    m_list->setObjectName(QStringLiteral("plotsList"));
    m_list->setViewMode(QListView::IconMode);
    m_list->setFlow(QListView::LeftToRight);
    m_list->setWrapping(false);
    m_list->setIconSize(QSize(kThumbnailSize, kThumbnailSize));
    m_list->setGridSize(QSize(kThumbnailSize + 16, kThumbnailSize + 30));
    m_list->setFixedHeight(kThumbnailSize + 30 + m_list->horizontalScrollBar()->sizeHint().height() + 6);
    m_list->setMovement(QListView::Static);
    m_list->setWordWrap(true);
    m_preview->setObjectName(QStringLiteral("plotPreview"));
    m_preview->setAlignment(Qt::AlignCenter);
    m_preview->setMinimumSize(120, 90);
    m_preview->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
    m_preview->setBackgroundRole(QPalette::Base);
    m_preview->setAutoFillBackground(true);
    m_list->setSelectionMode(QAbstractItemView::SingleSelection);
    m_list->setContextMenuPolicy(Qt::CustomContextMenu);
    m_list->setAccessibleName(tr("Plots"));
    m_save->setObjectName(QStringLiteral("savePlot"));
    m_copy->setObjectName(QStringLiteral("copyPlot"));
    m_zoom->setObjectName(QStringLiteral("zoomPlot"));
    m_save->setToolTip(tr("Save the plot as PNG, or SVG and PDF when it carries them"));
    m_copy->setToolTip(tr("Copy the plot to the clipboard"));
    m_zoom->setToolTip(tr("Show the plot in a window that zooms (a double click does too)"));
    connect(m_save, &QPushButton::clicked, this, [this] {
        if (const int row = currentRow(); row >= 0)
            plot(row).saveWithDialog(this, m_entries.at(row).fileName);
    });
    connect(m_copy, &QPushButton::clicked, this, [this] {
        if (const int row = currentRow(); row >= 0)
            plot(row).copyToClipboard();
    });
    connect(m_zoom, &QPushButton::clicked, this, [this] {
        if (const int row = currentRow(); row >= 0)
            plot(row).showZoomed(this, plotTitle(row));
    });
    connect(m_list, &QListWidget::itemActivated, this, [this] { m_zoom->click(); });
    connect(m_list, &QListWidget::currentRowChanged, this, [this] {
        updateButtons();
        showPreview();
    });
    connect(m_list, &QWidget::customContextMenuRequested, this, [this](const QPoint &at) {
        const QListWidgetItem *item = m_list->itemAt(at);
        if (!item)
            return;
        const int row = m_list->row(item);
        auto *menu = new QMenu(this);
        menu->setAttribute(Qt::WA_DeleteOnClose);
        plot(row).addActions(menu, this, m_entries.at(row).fileName);
        menu->popup(m_list->viewport()->mapToGlobal(at));
    });

    auto *buttons = new QHBoxLayout;
    buttons->setContentsMargins(4, 2, 4, 2);
    buttons->addWidget(m_save);
    buttons->addWidget(m_copy);
    buttons->addWidget(m_zoom);
    buttons->addStretch(1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(buttons);
    layout->addWidget(m_preview, 1);
    layout->addWidget(m_list);
    layout->addWidget(m_summary);
    m_summary->setContentsMargins(4, 2, 4, 2);
    updateButtons();
}

void PlotsPanel::setContext(const QString &workspace, const QString &contextId)
{
    for (const QMetaObject::Connection &c : std::as_const(m_connections))
        disconnect(c);
    m_connections.clear();
    m_noted.clear();
    m_entries.clear();
    m_workspace = workspace;
    m_contextId = contextId;
    const quint64 generation = ++m_generation;
    rebuildList();
    if (contextId.isEmpty())
        return;
    QPointer<PlotsPanel> self(this);
    m_engine.history(workspace, contextId, kExecutionsScanned,
                     [self, generation](Result<QList<storage::ExecutionRecord>> history) {
        if (!self || self->m_generation != generation || !history)
            return;
        // Oldest first, so that each image goes before those already listed.
        for (auto it = history->crbegin(); it != history->crend(); ++it) {
            if (const core::ExecutionPtr live = self->m_engine.followedExecution(it->id); live && !live->isFinished()) {
                self->noteExecution(live);
                continue;
            }
            const QString id = it->id;
            const int count = it->executionCount;
            self->m_engine.executionEvents(id, [self, generation, id, count](Result<QList<Event>> events) {
                if (!self || self->m_generation != generation || !events)
                    return;
                for (const Event &event : *events)
                    self->addEvent(id, count, event, false);
                self->rebuildList();
            });
        }
    });
}

void PlotsPanel::noteExecution(const core::ExecutionPtr &execution)
{
    if (!execution || execution->contextId() != m_contextId || m_noted.contains(execution->id()))
        return;
    for (const Entry &entry : std::as_const(m_entries)) {
        if (entry.executionId == execution->id())
            return;  // known (from the history): its images are listed
    }
    const QString id = execution->id();
    m_noted.insert(id);
    const std::weak_ptr<core::Execution> weak = execution;
    if (const auto events = execution->eventRange()) {
        for (const Event &event : *events)
            addEvent(id, execution->executionCount(), event, false);
    }
    if (!execution->isFinished()) {
        m_connections.append(connect(execution.get(), &core::Execution::eventAdded, this,
                                     [this, id, weak](const Event &event, int) {
            const core::ExecutionPtr e = weak.lock();
            addEvent(id, e ? e->executionCount() : 0, event, true);
        }));
    }
    rebuildList();
}

void PlotsPanel::addEvent(const QString &executionId, int executionCount, const Event &event, bool live)
{
    if (event.kind != Event::Kind::Display && event.kind != Event::Kind::Result)
        return;
    const std::optional<PlotImage> plot = PlotImage::fromBundle(event.fields.value(QLatin1String("data")).toObject());
    if (!plot)
        return;
    const QString displayId = event.fields.value(QLatin1String("display_id")).toString();
    if (!displayId.isEmpty() && event.fields.value(QLatin1String("update")).toBool()) {
        for (Entry &entry : m_entries) {
            if (entry.displayId == displayId) {
                entry.plot = *plot;
                if (live)
                    rebuildList();
                return;
            }
        }
    }
    int sameRun = 1;
    for (const Entry &entry : std::as_const(m_entries))
        sameRun += entry.executionId == executionId;
    Entry entry;
    entry.plot = *plot;
    entry.executionId = executionId;
    entry.displayId = displayId;
    entry.title = executionCount > 0 ? tr("In [%1] · %2").arg(executionCount).arg(sameRun)
                                     : tr("Plot %1").arg(m_entries.size() + 1);
    entry.fileName = executionCount > 0 ? QStringLiteral("plot-%1-%2").arg(executionCount).arg(sameRun)
                                        : QStringLiteral("plot-%1").arg(m_entries.size() + 1);
    m_entries.prepend(entry);
    if (live)
        rebuildList();
}

void PlotsPanel::rebuildList()
{
    const QSignalBlocker blocker(m_list);
    m_list->clear();
    for (const Entry &entry : std::as_const(m_entries)) {
        const QImage image = entry.plot.image(devicePixelRatioF());
        QPixmap thumbnail = QPixmap::fromImage(image.scaled(QSize(kThumbnailSize, kThumbnailSize) * devicePixelRatioF(),
                                                            Qt::KeepAspectRatio, Qt::SmoothTransformation));
        thumbnail.setDevicePixelRatio(devicePixelRatioF());
        auto *item = new QListWidgetItem(QIcon(thumbnail), entry.title, m_list);
        const QSize size = entry.plot.size();
        item->setToolTip(tr("%1 · %2×%3 · saves as %4")
                                 .arg(entry.title)
                                 .arg(size.width())
                                 .arg(size.height())
                                 .arg(entry.plot.saveFormats().join(QStringLiteral(", ")).toUpper()));
    }
    if (!m_entries.isEmpty())
        m_list->setCurrentRow(0);
    m_summary->setText(m_contextId.isEmpty() ? tr("Select a context to see its plots.")
                       : m_entries.isEmpty() ? tr("No plots yet: figures and images the context shows appear here.")
                       : m_entries.size() == 1 ? tr("1 plot.")
                                               : tr("%1 plots, newest first.").arg(m_entries.size()));
    updateButtons();
    showPreview();
    emit countChanged(int(m_entries.size()));
}

void PlotsPanel::showPreview()
{
    const int row = currentRow();
    if (row < 0) {
        m_preview->setPixmap(QPixmap());
        m_preview->setText(m_summary->text());
        m_preview->setToolTip(QString());
        return;
    }
    const qreal ratio = devicePixelRatioF();
    const QImage image = plot(row).image(ratio);
    const QSizeF own = QSizeF(image.size()) / image.devicePixelRatio();
    // As large as the panel allows, never enlarged.
    const QSize room = m_preview->size() - QSize(8, 8);
    QSizeF shown = own;
    if (shown.width() > room.width() || shown.height() > room.height())
        shown = own.scaled(QSizeF(room), Qt::KeepAspectRatio);
    QPixmap pixmap = QPixmap::fromImage(image.scaled((shown * ratio).toSize().expandedTo(QSize(1, 1)),
                                                     Qt::KeepAspectRatio, Qt::SmoothTransformation));
    pixmap.setDevicePixelRatio(ratio);
    m_preview->setPixmap(pixmap);
    m_preview->setToolTip(plotTitle(row));
}

QPixmap PlotsPanel::preview() const
{
    return m_preview->pixmap();
}

void PlotsPanel::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    showPreview();
}

void PlotsPanel::updateButtons()
{
    const bool any = currentRow() >= 0;
    m_save->setEnabled(any);
    m_copy->setEnabled(any);
    m_zoom->setEnabled(any);
}

int PlotsPanel::count() const
{
    return int(m_entries.size());
}

int PlotsPanel::currentRow() const
{
    const int row = m_list->currentRow();
    return row >= 0 && row < m_entries.size() ? row : -1;
}

const PlotImage &PlotsPanel::plot(int row) const
{
    return m_entries.at(row).plot;
}

QString PlotsPanel::plotTitle(int row) const
{
    return m_entries.at(row).title;
}

} // namespace replhost::gui
