// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/contextmanager.h"

#include <replhost/sdk/event.h>

#include <QHash>
#include <QList>
#include <QTextBrowser>
#include <QTextCharFormat>
#include <QTextCursor>
#include <QTimer>

class QToolButton;

namespace replhost::gui {

// A transcript of executions as a rich-text view: each execution's code, then its outputs as
// they stream — stdout in the text colour, stderr in a warm colour, results ("Out[n]") as text,
// HTML or images (PNG, SVG), errors on a tinted block with the traceback's frames and final line
// emphasised, and a footer with the status and duration. The view follows new output while the
// user is at its end; scrolled up, it stays put and shows a "jump to latest" button.
//
// Long output stays responsive: stream text is coalesced and inserted at most every few tens of
// milliseconds, and only the first kStreamCharsShown characters of an execution's streams are
// kept in the widget; the rest is counted, its last kTailChars shown when the execution ends,
// and a link asks the window to save the full output (which lives in the Execution, up to the
// engine's per-execution cap).
//
// Ownership: a QWidget in its parent's tree; followed executions are shared and released by
// clearAll() or the view's destruction. GUI thread only.
class OutputView : public QTextBrowser {
    Q_OBJECT
public:
    static constexpr qint64 kStreamCharsShown = 256 * 1024;
    static constexpr int kTailChars = 16 * 1024;
    // Past this size the view starts over at the next execution (the history keeps everything).
    static constexpr int kDocumentCharsKept = 4'000'000;

    explicit OutputView(QWidget *parent = nullptr);

    void clearAll();
    // Appends `execution` (its code when `withCode`, the events it has so far) and follows its
    // new events until it finishes.
    void addExecution(const core::ExecutionPtr &execution, bool withCode = true);
    // Appends what the context's interpreter wrote between runs (see core::BackgroundOutput),
    // under a muted line that says so; consecutive entries share that line.
    void addBackground(const core::BackgroundOutput::Entry &entry);
    // Appends a muted line of the workbench's own between runs (for instance "restarted").
    void addNote(const QString &text);
    // Appends an execution that is only known from storage.
    void addRecorded(const QString &executionId, int executionCount, const QString &code,
                     const QList<sdk::Event> &events, bool withCode = true,
                     qint64 durationMs = -1);

    void setOutputFont(const QFont &font);

    // Characters of stream output received but not kept in the widget, over everything shown.
    qint64 hiddenCharacters() const;

    // Whether new output scrolls the view to its end: true until the user scrolls away from the
    // end, true again once they scroll back or press the "jump to latest" button shown meanwhile.
    bool isFollowing() const;

public slots:
    // Scrolls to the end and follows new output again.
    void jumpToLatest();

signals:
    // The user asked for an execution's complete output (the link under capped output).
    void saveFullOutputRequested(const QString &executionId);

protected:
    void changeEvent(QEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    struct Block {
        QString executionId;
        int executionCount = 0;
        // At the start of the "In [ ]" written for a run whose count comes later (with its
        // `started`); null otherwise. A cursor, so that it follows edits before it (another such
        // prompt numbered with more digits); text is only appended after it.
        QTextCursor blankPrompt;
        qint64 shownStreamChars = 0;
        qint64 hiddenStreamChars = 0;
        QString tail;              // last kTailChars of hidden stream text
        QString tailStream;        // stream name of the last hidden chunk
        QString pending;           // coalesced stream text not inserted yet
        QString pendingStream;
        bool finished = false;
        int imageCount = 0;
        // Where the duration comes from when the Done event does not carry one.
        std::weak_ptr<core::Execution> execution;
        qint64 recordedDurationMs = -1;
    };

    Block &beginBlock(const QString &executionId, int executionCount, const QString &code,
                      bool withCode);
    void handleEvent(const QString &executionId, const sdk::Event &event);
    void renderEvent(Block &block, const sdk::Event &event);
    void queueStream(Block &block, const QString &name, QString text);
    void flushPending();
    void flushBlock(Block &block);
    void renderBundle(Block &block, const QJsonObject &data, bool isResult);
    void renderError(const sdk::Event &event);
    void renderDone(Block &block, const sdk::Event &event);
    // One line for a "restored" event: what the replay restored, or where it stopped.
    static QString restoredNotice(const QJsonObject &fields);
    void insertText(const QString &text, const QTextCharFormat &format);
    void newParagraph(const QColor &background = QColor());
    // Keeps the end in view while following.
    void followEnd();
    bool isAtEnd() const;
    void placeJumpButton();
    QTextCharFormat streamFormat(const QString &name) const;
    QTextCharFormat mutedFormat() const;

    QFont m_font;
    QList<Block> m_blocks;
    QHash<QString, int> m_blockIndex;  // execution id -> index in m_blocks
    int m_backgroundBlock = -1;         // the block background output goes to; -1: start one
    QList<QMetaObject::Connection> m_connections;
    QList<core::ExecutionPtr> m_followed;
    QTimer m_flushTimer;
    bool m_atParagraphStart = true;
    bool m_lastWasStream = false;
    qint64 m_hiddenTotal = 0;
    bool m_following = true;
    bool m_scrollingToEnd = false;  // the view's own scrolling, not the user's
    QToolButton *m_jumpButton = nullptr;  // child of the view
};

} // namespace replhost::gui
