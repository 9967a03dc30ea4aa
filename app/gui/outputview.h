// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "plotimage.h"

#include "engineclient.h"  // the run and background output it renders

#include <replhost/sdk/event.h>

#include <QHash>
#include <QJsonValue>
#include <QList>
#include <QPointer>
#include <QSet>
#include <QTextBrowser>
#include <QTextCharFormat>
#include <QTextCursor>
#include <QTimer>

#include <functional>

class QMenu;
class QTextFrame;
class QToolButton;

namespace replhost::gui {

// A transcript of executions as a rich-text view: each execution's code, then its outputs as
// they stream — stdout in the text colour, stderr in a warm colour, results ("Out[n]") and
// displays, errors on a tinted block with the traceback's frames and final line emphasised, and
// a footer with the status and duration. The view follows new output while the user is at its
// end; scrolled up, it stays put and shows a "jump to latest" button.
//
// A MIME bundle shows its richest form the view knows: a table (application/vnd.replhost.data+
// json, its first kTableRowsShown rows, with a link that opens the whole table), an image (PNG,
// JPEG, SVG; a chart's data, application/vnd.replhost.chart+json, as a folded tree under it),
// HTML, Markdown, LaTeX as its source text, JSON (application/json) as a tree whose nodes fold
// on a click, then text/plain. Images are scaled to the view's width; a click shows one at its
// own size and back, and its context menu saves, copies and zooms it (see PlotImage).
//
// A display with a display_id can be updated: a display event with `update: true` and the
// same id redraws every place that display is shown, in place. A clear_output event clears
// what the run has shown so far; with `wait`, only once the run's next output arrives.
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
    // Rows of a table shown in the transcript; the table's window has all it carries.
    static constexpr int kTableRowsShown = 30;
    static constexpr int kTableColumnsShown = 24;

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

    // The images shown, in the order they were drawn (replaced and cleared ones are gone).
    int imageCount() const;
    // The size an image is drawn at, and where (viewport coordinates).
    QSizeF imageShownSize(int index) const;
    QRect imageRect(int index) const;
    // The image at a viewport position, or -1.
    int imageAt(const QPoint &viewportPos) const;
    // Whether an image is shown at its own size rather than fitted to the width; a click on
    // it switches.
    bool isImageFullSize(int index) const;
    void setImageFullSize(int index, bool fullSize);
    const PlotImage &image(int index) const;
    // The image's context menu (save, copy, zoom, full size), owned by the caller.
    QMenu *createImageMenu(int index, QWidget *parent);

public slots:
    // Scrolls to the end and follows new output again.
    void jumpToLatest();

signals:
    // The user asked for an execution's complete output (the link under capped output).
    void saveFullOutputRequested(const QString &executionId);

protected:
    void changeEvent(QEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    bool viewportEvent(QEvent *event) override;
    void contextMenuEvent(QContextMenuEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;

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
        // Where the run's output starts (after its code), for clear_output; stays put when
        // output is appended there.
        QTextCursor outputStart;
        bool clearPending = false;  // a clear_output with wait: clear at the next output
    };
    struct ShownImage {
        QTextCursor at;  // before the image's character
        QString name;
        QSizeF ownSize;
        bool fullSize = false;
        PlotImage plot;
        QString title;
    };
    struct JsonTree {
        QPointer<QTextFrame> frame;
        QJsonValue value;
        QString title;
        int foldDepth = 2;     // nodes this deep start folded
        QSet<QString> toggled;  // paths whose fold was switched by a click
    };

    Block &beginBlock(const QString &executionId, int executionCount, const QString &code,
                      bool withCode);
    void handleEvent(const QString &executionId, const sdk::Event &event);
    void renderEvent(Block &block, const sdk::Event &event);
    void queueStream(Block &block, const QString &name, QString text);
    void flushPending();
    void flushBlock(Block &block);
    void renderBundle(Block &block, const QJsonObject &data, bool isResult);
    void renderDisplay(Block &block, const sdk::Event &event);
    void updateDisplay(Block &block, const QString &displayId, const QJsonObject &data);
    void clearBlockOutput(Block &block);
    void insertImage(Block &block, const PlotImage &plot);
    void renderTable(const QJsonObject &table);
    // A JSON tree in a frame of its own, redrawn in place when a node is (un)folded.
    void insertJsonTree(const QJsonValue &value, const QString &title, int foldDepth);
    void drawJsonTree(int treeId);
    void drawJsonNode(int treeId, const QString &key, const QJsonValue &value, const QString &path,
                      int depth);
    // A frame at the write position, for output redrawn in place later.
    QTextFrame *insertFrame();
    // Writes into `frame` (after what it holds) instead of at the end, for the call.
    void writeInto(QTextFrame *frame, const std::function<void()> &draw);
    static void clearFrame(QTextFrame *frame);
    bool frameIsShown(const QTextFrame *frame) const;
    // Where output goes: the end of the document, or a frame being redrawn.
    QTextCursor &writer();
    void fitImages();
    qreal imageRoom() const;
    // The image entry still at its place in the document, or null (its output was replaced).
    bool imageIsShown(const ShownImage &image) const;
    // The image's character, selected.
    QTextCursor imageSelection(const ShownImage &image) const;
    void pruneImages();
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
    QTextCursor m_write;
    bool m_writingInPlace = false;
    QList<ShownImage> m_images;
    QHash<QString, QList<QPointer<QTextFrame>>> m_displays;  // display_id -> where it is shown
    QHash<int, JsonTree> m_trees;
    QHash<int, QJsonObject> m_tables;
    int m_nextId = 0;
    QTimer m_fitTimer;
    QPoint m_pressedAt;
};

} // namespace replhost::gui
