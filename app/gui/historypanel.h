// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "engineclient.h"

#include <QHash>
#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTreeWidget;
class QTreeWidgetItem;

namespace replhost::gui {

class OutputView;

// The execution history of one context, read from the engine's history (so it survives
// restarts) and joined with the executions this window saw that the history has not committed
// yet. Selecting an execution shows its code and outputs; it can be run again or copied to the
// editor.
//
// Ownership: a QWidget in its parent's tree; the engine client must outlive it. GUI thread only.
class HistoryPanel : public QWidget {
    Q_OBJECT
public:
    static constexpr int kPageSize = 200;
    static constexpr int kLiveKept = 64;

    HistoryPanel(EngineClient &engine, QWidget *parent = nullptr);

    void setContext(const QString &workspace, const QString &contextId);
    // An execution of this program run, listed before storage has it.
    void noteExecution(const core::ExecutionPtr &execution);
    // Asks the engine for the context's history again; the rows follow its answer.
    void refresh();

    int rowCount() const;
    // Older executions than those listed exist in storage; loadOlder() lists another page.
    bool hasOlder() const { return m_hasOlder; }
    void loadOlder();
    // Selects the row-th execution, newest first.
    void selectRow(int row);
    QString statusAt(int row) const;
    QString selectedCode() const;
    QString selectedExecutionId() const;
    OutputView *outputView() const { return m_output; }
    void setOutputFont(const QFont &font);

signals:
    void rerunRequested(const QString &code);
    void copyToEditorRequested(const QString &code);

private:
    void showRecords(const Result<QList<storage::ExecutionRecord>> &records);
    void showSelected();
    void addRow(const QString &id, qint64 seq, int count, const QString &status,
                qint64 startedAt, qint64 durationMs, const QString &code, bool truncated);

    EngineClient &m_engine;
    quint64 m_generation = 0;  // of the last refresh(): older answers are dropped
    QString m_workspace, m_contextId;
    // This run's most recent executions, by id; bounded so old outputs are not kept alive.
    QHash<QString, core::ExecutionPtr> m_live;
    QList<QString> m_liveOrder;
    QString m_shownId;  // the execution the output view shows (and follows, if live)
    QTreeWidget *m_list;
    QPlainTextEdit *m_code;
    OutputView *m_output;
    QPushButton *m_rerun, *m_copy, *m_older;
    int m_limit = kPageSize;  // how many stored executions are listed
    bool m_hasOlder = false;
    QLabel *m_summary;
};

} // namespace replhost::gui
