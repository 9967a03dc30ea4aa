// SPDX-License-Identifier: Apache-2.0
#include "historypanel.h"

#include "languagebadge.h"
#include "outputview.h"

#include <QDateTime>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

namespace replhost::gui {

namespace {

constexpr int kIdRole = Qt::UserRole;
constexpr int kCodeRole = Qt::UserRole + 1;
constexpr int kCountRole = Qt::UserRole + 2;
constexpr int kDurationRole = Qt::UserRole + 3;

QString stateForStatus(const QString &status)
{
    if (status == QLatin1String("ok"))
        return QStringLiteral("idle");
    if (status == QLatin1String("running") || status == QLatin1String("queued"))
        return QStringLiteral("busy");
    if (status == QLatin1String("interrupted"))
        return QStringLiteral("interrupted");
    return QStringLiteral("dead");
}

} // namespace

HistoryPanel::HistoryPanel(EngineClient &engine, QWidget *parent)
    : QWidget(parent)
    , m_engine(engine)
    , m_list(new QTreeWidget(this))
    , m_code(new QPlainTextEdit(this))
    , m_output(new OutputView(this))
    , m_rerun(new QPushButton(tr("&Run again"), this))
    , m_copy(new QPushButton(tr("Copy to &editor"), this))
    , m_older(new QPushButton(tr("Load &older"), this))
    , m_summary(new QLabel(this))
{
    m_list->setHeaderLabels({tr("#"), tr("Status"), tr("Started"), tr("Time"), tr("Code")});
    m_list->setRootIsDecorated(false);
    m_list->setUniformRowHeights(true);
    m_list->setAccessibleName(tr("Execution history"));
    m_list->header()->setStretchLastSection(true);
    for (int column = 0; column < 4; ++column)
        m_list->header()->setSectionResizeMode(column, QHeaderView::ResizeToContents);
    m_code->setReadOnly(true);
    m_code->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_code->setAccessibleName(tr("Code of the selected execution"));
    m_code->setPlaceholderText(tr("Code of the selected execution"));
    m_output->setPlaceholderText(tr("Select an execution to see its outputs."));
    m_summary->setWordWrap(true);
    m_rerun->setEnabled(false);
    m_copy->setEnabled(false);
    m_rerun->setToolTip(tr("Run this code again in the context"));
    m_copy->setToolTip(tr("Put this code into the editor"));
    m_older->setToolTip(tr("List %n more of the older executions", nullptr, kPageSize));
    m_older->setVisible(false);

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_summary, 1);
    buttons->addWidget(m_older);
    buttons->addWidget(m_copy);
    buttons->addWidget(m_rerun);

    auto *detail = new QSplitter(Qt::Vertical, this);
    detail->addWidget(m_list);
    detail->addWidget(m_code);
    detail->addWidget(m_output);
    detail->setStretchFactor(0, 2);
    detail->setStretchFactor(1, 1);
    detail->setStretchFactor(2, 3);
    detail->setChildrenCollapsible(false);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(detail, 1);
    layout->addLayout(buttons);

    connect(m_list, &QTreeWidget::currentItemChanged, this, &HistoryPanel::showSelected);
    connect(m_list, &QTreeWidget::itemActivated, this, [this] {
        if (!selectedCode().isEmpty())
            emit copyToEditorRequested(selectedCode());
    });
    connect(m_rerun, &QPushButton::clicked, this, [this] { emit rerunRequested(selectedCode()); });
    connect(m_copy, &QPushButton::clicked, this, [this] { emit copyToEditorRequested(selectedCode()); });
    connect(m_older, &QPushButton::clicked, this, &HistoryPanel::loadOlder);
}

void HistoryPanel::setOutputFont(const QFont &font)
{
    m_output->setOutputFont(font);
    m_code->setFont(font);
    m_shownId.clear();  // render again with the new font and palette
}

void HistoryPanel::setContext(const QString &workspace, const QString &contextId)
{
    if (workspace == m_workspace && contextId == m_contextId)
        return;
    m_workspace = workspace;
    m_contextId = contextId;
    m_limit = kPageSize;
    refresh();
}

void HistoryPanel::noteExecution(const core::ExecutionPtr &execution)
{
    // Noted once when queued and again when it starts: the second only refreshes its row.
    if (!m_live.contains(execution->id())) {
        m_live.insert(execution->id(), execution);
        m_liveOrder.append(execution->id());
        while (m_liveOrder.size() > kLiveKept)
            m_live.remove(m_liveOrder.takeFirst());
    }
    if (execution->contextId() == m_contextId)
        refresh();
}

void HistoryPanel::loadOlder()
{
    m_limit += kPageSize;
    refresh();
}

void HistoryPanel::addRow(const QString &id, qint64 seq, int count, const QString &status,
                          qint64 startedAt, qint64 durationMs, const QString &code, bool truncated)
{
    auto *item = new QTreeWidgetItem(m_list);
    item->setData(0, kIdRole, id);
    item->setData(0, kCodeRole, code);
    item->setData(0, kCountRole, count);
    item->setData(0, kDurationRole, durationMs);
    item->setText(0, count > 0 ? QString::number(count) : QString::number(seq));
    item->setTextAlignment(0, Qt::AlignRight | Qt::AlignVCenter);
    item->setText(1, truncated ? tr("%1 (cut)").arg(status) : status);
    item->setIcon(1, LanguageBadge::stateIcon(stateForStatus(status)));
    const QDateTime when = QDateTime::fromMSecsSinceEpoch(startedAt);
    if (startedAt > 0)  // a queued execution has not started
        item->setText(2, when.date() == QDate::currentDate() ? when.toString(QStringLiteral("HH:mm:ss"))
                                                              : when.toString(QStringLiteral("yyyy-MM-dd HH:mm")));
    item->setText(3, durationMs < 0 ? QString() : durationMs < 1000
                                                       ? tr("%1 ms").arg(durationMs)
                                                       : tr("%1 s").arg(durationMs / 1000.0, 0, 'f', 1));
    // The first line with something on it: code often starts with blank lines (a cell's).
    const QString shown = code.trimmed();
    QString firstLine = shown.section(QLatin1Char('\n'), 0, 0).trimmed();
    if (shown.contains(QLatin1Char('\n')))
        firstLine += QStringLiteral(" ⋯");
    item->setText(4, firstLine);
    item->setToolTip(4, code.left(2000));
}

void HistoryPanel::refresh()
{
    const quint64 generation = ++m_generation;
    if (m_contextId.isEmpty()) {
        showRecords(QList<storage::ExecutionRecord>());
        return;
    }
    QPointer<HistoryPanel> self(this);
    // One more than is listed, to know whether older ones exist.
    m_engine.history(m_workspace, m_contextId, m_limit + 1,
                     [self, generation](Result<QList<storage::ExecutionRecord>> records) {
        if (self && self->m_generation == generation)
            self->showRecords(records);
    });
}

void HistoryPanel::showRecords(const Result<QList<storage::ExecutionRecord>> &answer)
{
    auto records = answer;
    // A selection on the newest row follows the newest execution; any other stays put.
    const bool followNewest = !m_list->currentItem() || m_list->indexOfTopLevelItem(m_list->currentItem()) == 0;
    const QString selected = followNewest ? QString() : selectedExecutionId();
    const QSignalBlocker blocker(m_list);
    m_list->clear();
    m_rerun->setEnabled(false);
    m_copy->setEnabled(false);
    m_hasOlder = false;
    m_older->setVisible(false);
    if (m_contextId.isEmpty()) {
        showSelected();
        m_summary->setText(tr("Select a context to see its history."));
        return;
    }

    QSet<QString> stored;
    if (records && records->size() > m_limit) {
        records->resize(m_limit);
        m_hasOlder = true;
    }
    m_older->setVisible(m_hasOlder);
    // Executions of this program run that the history writer has not committed yet come first
    // (they are the newest), then what storage has.
    QList<core::ExecutionPtr> pending;
    if (records) {
        for (const storage::ExecutionRecord &r : *records)
            stored.insert(r.id);
    }
    // Newest first: queued executions (not started) on top, the last queued first.
    for (auto id = m_liveOrder.crbegin(); id != m_liveOrder.crend(); ++id) {
        const core::ExecutionPtr &e = m_live.value(*id);
        if (e->contextId() == m_contextId && !stored.contains(e->id()))
            pending.append(e);
    }
    const auto startKey = [](const core::ExecutionPtr &e) {
        return e->startedAt().isValid() ? e->startedAt().toMSecsSinceEpoch()
                                        : std::numeric_limits<qint64>::max();
    };
    std::stable_sort(pending.begin(), pending.end(),
                     [&](const core::ExecutionPtr &a, const core::ExecutionPtr &b) {
        return startKey(a) > startKey(b);
    });
    for (const core::ExecutionPtr &e : std::as_const(pending))
        addRow(e->id(), 0, e->executionCount(), e->status(),
               e->startedAt().isValid() ? e->startedAt().toMSecsSinceEpoch() : 0, e->durationMs(),
               e->code(), false);
    if (records) {
        for (const storage::ExecutionRecord &r : *records) {
            // A live execution knows its status before storage does.
            const auto live = m_live.constFind(r.id);
            const QString status = live != m_live.constEnd() ? (*live)->status() : r.status;
            const qint64 duration = live != m_live.constEnd() ? (*live)->durationMs() : r.durationMs;
            addRow(r.id, r.seq, r.executionCount, status, r.startedAt, duration, r.code, r.truncated);
        }
        m_summary->setText(m_hasOlder ? tr("the newest %n execution(s)", nullptr, int(m_list->topLevelItemCount()))
                                      : tr("%n execution(s)", nullptr, int(m_list->topLevelItemCount())));
    } else {
        m_summary->setText(tr("History unavailable: %1").arg(records.error().message));
    }
    for (int i = 0; i < m_list->topLevelItemCount(); ++i) {
        if (m_list->topLevelItem(i)->data(0, kIdRole).toString() == selected) {
            m_list->setCurrentItem(m_list->topLevelItem(i));
            break;
        }
    }
    // Nothing chosen yet: show the newest, so the panel is never a blank page.
    if (!m_list->currentItem() && m_list->topLevelItemCount() > 0)
        m_list->setCurrentItem(m_list->topLevelItem(0));
    showSelected();
}

int HistoryPanel::rowCount() const
{
    return m_list->topLevelItemCount();
}

void HistoryPanel::selectRow(int row)
{
    if (row >= 0 && row < m_list->topLevelItemCount())
        m_list->setCurrentItem(m_list->topLevelItem(row));
}

QString HistoryPanel::statusAt(int row) const
{
    const QTreeWidgetItem *item = m_list->topLevelItem(row);
    return item ? item->text(1) : QString();
}

QString HistoryPanel::selectedCode() const
{
    const QTreeWidgetItem *item = m_list->currentItem();
    return item ? item->data(0, kCodeRole).toString() : QString();
}

QString HistoryPanel::selectedExecutionId() const
{
    const QTreeWidgetItem *item = m_list->currentItem();
    return item ? item->data(0, kIdRole).toString() : QString();
}

void HistoryPanel::showSelected()
{
    const QTreeWidgetItem *item = m_list->currentItem();
    m_rerun->setEnabled(item != nullptr);
    m_copy->setEnabled(item != nullptr);
    const QString id = item ? item->data(0, kIdRole).toString() : QString();
    // Already shown (and followed while it runs): rendering a long output again would only
    // cost time.
    if (!id.isEmpty() && id == m_shownId)
        return;
    m_shownId = id;
    m_output->clearAll();
    if (!item) {
        m_code->clear();
        return;
    }
    m_code->setPlainText(item->data(0, kCodeRole).toString());
    // A live (or recently finished) execution has every event in memory; otherwise storage.
    if (const auto live = m_live.constFind(id); live != m_live.constEnd()) {
        if (!(*live)->isFinished()) {
            // The main view streams it already; render here once it has finished.
            m_shownId.clear();
            m_output->setPlaceholderText((*live)->status() == QLatin1String("queued")
                                                 ? tr("Queued: it runs when the execution before it ends.")
                                                 : tr("Running… its output streams in the main view."));
            return;
        }
        m_output->setPlaceholderText(tr("Select an execution to see its outputs."));
        m_output->addExecution(*live, false);
        return;
    }
    if (const core::ExecutionPtr execution = m_engine.followedExecution(id)) {
        m_output->addExecution(execution, false);
        return;
    }
    const int count = item->data(0, kCountRole).toInt();
    const qint64 duration = item->data(0, kDurationRole).toLongLong();
    QPointer<HistoryPanel> self(this);
    m_engine.executionEvents(id, [self, id, count, duration](Result<QList<sdk::Event>> events) {
        if (!self || self->m_shownId != id)
            return;  // another execution is shown by now
        if (!events) {
            self->m_output->setPlainText(tr("Cannot read this execution's outputs: %1").arg(events.error().message));
            return;
        }
        self->m_output->addRecorded(id, count, QString(), *events, false, duration);
    });
}

} // namespace replhost::gui
