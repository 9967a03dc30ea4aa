// SPDX-License-Identifier: Apache-2.0
#include "outputview.h"

#include "datatabledialog.h"
#include "datatablemodel.h"
#include "themes.h"

#include <QAbstractTextDocumentLayout>
#include <QApplication>
#include <QBuffer>
#include <QImage>
#include <QContextMenuEvent>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMenu>
#include <QMouseEvent>
#include <QLocale>
#include <QPainter>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSvgRenderer>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextLayout>
#include <QTextFrame>
#include <QTextTable>
#include <QToolButton>
#include <QUrl>

#include <algorithm>

namespace replhost::gui {

using sdk::Event;

namespace {

constexpr int kFlushIntervalMs = 40;
constexpr int kCodeLinesShown = 8;
constexpr int kJsonItemsShown = 100;
const QString kSaveScheme = QStringLiteral("replhost-output");
const QString kJsonScheme = QStringLiteral("replhost-json");
const QString kTableScheme = QStringLiteral("replhost-table");
const QString kChartMime = QStringLiteral("application/vnd.replhost.chart+json");

// Terminal colour codes and cursor controls mean nothing in a text document.
QString stripTerminalCodes(QString text)
{
    static const QRegularExpression csi(QStringLiteral("\x1b\\[[0-9;?]*[ -/]*[@-~]"));
    if (text.contains(QChar(0x1b)))
        text.remove(csi);
    // A carriage return before a newline is a line ending; a lone one (progress bars) would
    // overwrite in a terminal, here it just becomes a line break.
    text.replace(QStringLiteral("\r\n"), QStringLiteral("\n"));
    text.replace(QLatin1Char('\r'), QLatin1Char('\n'));
    return text;
}

QString humanSize(qint64 characters)
{
    return QLocale::system().formattedDataSize(characters, 1, QLocale::DataSizeTraditionalFormat)
            .replace(QLatin1String("bytes"), QLatin1String("characters"));
}

QString humanDuration(qint64 ms)
{
    if (ms < 0)
        return QString();
    if (ms < 1000)
        return QStringLiteral("%1 ms").arg(ms);
    if (ms < 60'000)
        return QStringLiteral("%1 s").arg(ms / 1000.0, 0, 'f', 2);
    return QStringLiteral("%1 min %2 s").arg(ms / 60'000).arg((ms % 60'000) / 1000);
}

} // namespace

OutputView::OutputView(QWidget *parent)
    : QTextBrowser(parent)
{
    setOpenLinks(false);
    setOpenExternalLinks(false);
    setUndoRedoEnabled(false);
    setLineWrapMode(QTextEdit::WidgetWidth);
    setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    document()->setDocumentMargin(8);
    setPlaceholderText(tr("Output appears here. Write code above and press Ctrl+Enter."));
    m_flushTimer.setInterval(kFlushIntervalMs);
    m_flushTimer.setSingleShot(true);
    connect(&m_flushTimer, &QTimer::timeout, this, &OutputView::flushPending);
    // The view follows the end while the user is there; scrolling up stops it, and the button
    // (or scrolling back down) starts it again. Layout can grow the document after text is
    // inserted (images, wrapping on resize), so the range change is what keeps the end in view.
    m_jumpButton = new QToolButton(this);
    m_jumpButton->setObjectName(QStringLiteral("jumpToLatest"));
    m_jumpButton->setText(tr("Jump to latest \u2193"));
    m_jumpButton->setToolTip(tr("Scroll to the newest output and follow it again"));
    m_jumpButton->setCursor(Qt::PointingHandCursor);
    m_jumpButton->hide();
    connect(m_jumpButton, &QToolButton::clicked, this, &OutputView::jumpToLatest);
    connect(verticalScrollBar(), &QScrollBar::valueChanged, this, [this] {
        if (m_scrollingToEnd)
            return;
        m_following = isAtEnd();
        if (m_following)
            m_jumpButton->hide();
    });
    connect(verticalScrollBar(), &QScrollBar::rangeChanged, this, [this] {
        if (m_following) {
            followEnd();
        } else if (!isAtEnd()) {
            placeJumpButton();
            m_jumpButton->show();
            m_jumpButton->raise();
        }
    });
    connect(this, &QTextBrowser::anchorClicked, this, [this](const QUrl &url) {
        if (url.scheme() == kSaveScheme) {
            emit saveFullOutputRequested(url.path());
        } else if (url.scheme() == kJsonScheme) {
            // replhost-json:<tree>/<path>: fold or unfold that node.
            const QString target = url.path();
            const int slash = int(target.indexOf(QLatin1Char('/')));
            const int tree = target.left(slash).toInt();
            if (slash > 0 && m_trees.contains(tree)) {
                const QString path = target.mid(slash + 1);
                JsonTree &t = m_trees[tree];
                if (!t.toggled.remove(path))
                    t.toggled.insert(path);
                drawJsonTree(tree);
            }
        } else if (url.scheme() == kTableScheme) {
            const int table = url.path().toInt();
            if (m_tables.contains(table)) {
                auto *dialog = new DataTableDialog(m_tables.value(table), tr("Table"), this);
                dialog->setAttribute(Qt::WA_DeleteOnClose);
                dialog->show();
            }
        }
    });
    m_write = QTextCursor(document());
    // Images follow the view's width; resizing redraws them once the resizing settles.
    m_fitTimer.setSingleShot(true);
    m_fitTimer.setInterval(30);
    connect(&m_fitTimer, &QTimer::timeout, this, &OutputView::fitImages);
}

void OutputView::setOutputFont(const QFont &font)
{
    m_font = font;
    document()->setDefaultFont(font);
}

qint64 OutputView::hiddenCharacters() const
{
    return m_hiddenTotal;
}

void OutputView::clearAll()
{
    for (const QMetaObject::Connection &c : std::as_const(m_connections))
        disconnect(c);
    m_connections.clear();
    m_followed.clear();
    m_blocks.clear();
    m_blockIndex.clear();
    m_backgroundBlock = -1;
    m_flushTimer.stop();
    m_hiddenTotal = 0;
    m_lastWasStream = false;
    m_atParagraphStart = true;
    m_images.clear();
    m_displays.clear();
    m_trees.clear();
    m_tables.clear();
    m_writingInPlace = false;
    clear();
    m_write = QTextCursor(document());
    jumpToLatest();
    document()->setDefaultFont(m_font);
}

bool OutputView::isAtEnd() const
{
    const QScrollBar *bar = verticalScrollBar();
    return bar->value() >= bar->maximum() - 4;
}

bool OutputView::isFollowing() const
{
    return m_following;
}

void OutputView::followEnd()
{
    if (!m_following)
        return;
    QScrollBar *bar = verticalScrollBar();
    m_scrollingToEnd = true;
    bar->setValue(bar->maximum());
    m_scrollingToEnd = false;
}

void OutputView::jumpToLatest()
{
    m_following = true;
    followEnd();
    m_jumpButton->hide();
}

void OutputView::placeJumpButton()
{
    m_jumpButton->adjustSize();
    const QRect area = viewport()->geometry();
    const int margin = 12;
    m_jumpButton->move(area.right() - m_jumpButton->width() - margin, area.bottom() - m_jumpButton->height() - margin);
}

bool OutputView::viewportEvent(QEvent *event)
{
    // The viewport also narrows when the vertical scroll bar appears, which the view's own
    // resize does not see.
    if (event->type() == QEvent::Resize && !m_images.isEmpty())
        m_fitTimer.start();
    return QTextBrowser::viewportEvent(event);
}

void OutputView::resizeEvent(QResizeEvent *event)
{
    QTextBrowser::resizeEvent(event);
    placeJumpButton();
    if (!m_images.isEmpty())
        m_fitTimer.start();
}

QTextCharFormat OutputView::streamFormat(const QString &name) const
{
    QTextCharFormat format;
    format.setFont(m_font);
    format.setForeground(name == QLatin1String("stderr") ? Themes::stderrColour(QApplication::palette())
                                                         : QApplication::palette().color(QPalette::Text));
    return format;
}

QTextCharFormat OutputView::mutedFormat() const
{
    QTextCharFormat format;
    format.setFont(m_font);
    format.setForeground(Themes::mutedColour(QApplication::palette()));
    return format;
}

QTextCursor &OutputView::writer()
{
    if (!m_writingInPlace)
        m_write.movePosition(QTextCursor::End);
    return m_write;
}

void OutputView::newParagraph(const QColor &background)
{
    QTextCursor &cursor = writer();
    QTextBlockFormat blockFormat;
    if (background.isValid())
        blockFormat.setBackground(background);
    // An empty last paragraph (a fresh document, or output that ended with a newline) is
    // reused, so no blank lines appear between outputs.
    if (cursor.block().text().isEmpty())
        cursor.setBlockFormat(blockFormat);
    else
        cursor.insertBlock(blockFormat, QTextCharFormat());
    m_atParagraphStart = true;
    m_lastWasStream = false;
}

void OutputView::insertText(const QString &text, const QTextCharFormat &format)
{
    writer().insertText(text, format);
    m_atParagraphStart = false;
}

OutputView::Block &OutputView::beginBlock(const QString &executionId, int executionCount,
                                          const QString &code, bool withCode)
{
    flushPending();
    if (document()->characterCount() > kDocumentCharsKept) {
        clearAll();
        insertText(tr("Earlier output was cleared from this view to keep it fast; the History "
                      "tab has every execution."),
                   mutedFormat());
    }
    QTextCursor blankPrompt;
    if (withCode) {
        newParagraph();
        QTextCharFormat prompt = mutedFormat();
        prompt.setFontWeight(QFont::Bold);
        const int promptAt = document()->characterCount() - 1;
        insertText(executionCount > 0 ? tr("In [%1]").arg(executionCount) : tr("In [ ]"), prompt);
        if (executionCount <= 0) {
            blankPrompt = QTextCursor(document());
            blankPrompt.setPosition(promptAt);
        }
        const QStringList lines = code.split(QLatin1Char('\n'));
        QTextCharFormat codeFormat;
        codeFormat.setFont(m_font);
        codeFormat.setForeground(QApplication::palette().color(QPalette::Text));
        const QColor codeBackground = QApplication::palette().color(QPalette::AlternateBase);
        const int shown = qMin(int(lines.size()), kCodeLinesShown);
        for (int i = 0; i < shown; ++i) {
            newParagraph(codeBackground);
            insertText(lines.at(i).isEmpty() ? QStringLiteral(" ") : lines.at(i), codeFormat);
        }
        if (lines.size() > shown) {
            newParagraph(codeBackground);
            insertText(tr("⋯ %n more line(s)", nullptr, int(lines.size() - shown)), mutedFormat());
        }
    }
    Block block;
    block.executionId = executionId;
    block.executionCount = executionCount;
    block.blankPrompt = blankPrompt;
    block.outputStart = QTextCursor(document());
    block.outputStart.movePosition(QTextCursor::End);
    block.outputStart.setKeepPositionOnInsert(true);
    m_blocks.append(block);
    m_blockIndex.insert(executionId, int(m_blocks.size() - 1));
    m_backgroundBlock = -1;  // background output after this block starts a block of its own
    followEnd();
    return m_blocks.last();
}

void OutputView::addExecution(const core::ExecutionPtr &execution, bool withCode)
{
    if (!execution || m_blockIndex.contains(execution->id()))
        return;
    // Output is written at the end of the view, so a run is drawn only once no earlier run is
    // shown unfinished: its block would otherwise sit between that run's code and its output.
    // A run queued behind a busy one waits until it starts (the history lists it meanwhile);
    // a run that starts while the done of the one before is still being committed (a run's end
    // is announced only once its history is on disk) waits for that done.
    if (!execution->isFinished()) {
        const auto unfinished = std::find_if(m_blocks.cbegin(), m_blocks.cend(), [](const Block &b) {
            const core::ExecutionPtr shown = b.execution.lock();
            return !b.finished && shown && !shown->isFinished();
        });
        if (unfinished != m_blocks.cend()) {
            const std::weak_ptr<core::Execution> later = execution;
            const auto retry = [this, later, withCode] {
                if (const core::ExecutionPtr e = later.lock())
                    addExecution(e, withCode);
            };
            const core::ExecutionPtr earlier = unfinished->execution.lock();
            if (execution->status() == QLatin1String("queued"))
                m_connections.append(connect(execution.get(), &core::Execution::eventAdded, this,
                                             retry, Qt::SingleShotConnection));
            else
                m_connections.append(connect(earlier.get(), &core::Execution::finished, this,
                                             retry, Qt::SingleShotConnection));
            return;
        }
    }
    Block &block = beginBlock(execution->id(), execution->executionCount(), execution->code(), withCode);
    block.execution = execution;
    const QString id = execution->id();
    for (const Event &event : execution->events())
        renderEvent(block, event);
    flushPending();
    if (!execution->isFinished()) {
        m_followed.append(execution);
        m_connections.append(connect(execution.get(), &core::Execution::eventAdded, this,
                                     [this, id](const Event &event, int) { handleEvent(id, event); }));
    }
}

void OutputView::addBackground(const core::BackgroundOutput::Entry &entry)
{
    if (m_backgroundBlock < 0) {
        flushPending();
        const int after = m_blockIndex.value(entry.afterExecutionId, -1);
        const int count = after >= 0 ? m_blocks.at(after).executionCount : 0;
        newParagraph();
        QTextCharFormat label = mutedFormat();
        label.setFontItalic(true);
        insertText(count > 0 ? tr("Written in the background after In [%1]:").arg(count)
                             : tr("Written in the background:"),
                   label);
        followEnd();
        // A block of its own, so that its streams are coalesced and capped like a run's.
        beginBlock(QStringLiteral("background-%1").arg(entry.seq), 0, QString(), false);
        m_backgroundBlock = int(m_blocks.size() - 1);
    }
    renderEvent(m_blocks[m_backgroundBlock], entry.event);
}

void OutputView::addNote(const QString &text)
{
    flushPending();
    newParagraph();
    QTextCharFormat format = mutedFormat();
    format.setFontItalic(true);
    insertText(text, format);
    m_backgroundBlock = -1;  // background output after the note gets a label of its own
    followEnd();
}

void OutputView::addRecorded(const QString &executionId, int executionCount, const QString &code,
                             const QList<Event> &events, bool withCode, qint64 durationMs)
{
    if (m_blockIndex.contains(executionId))
        return;
    Block &block = beginBlock(executionId, executionCount, code, withCode);
    block.recordedDurationMs = durationMs;
    for (const Event &event : events)
        renderEvent(block, event);
    flushPending();
}

void OutputView::handleEvent(const QString &executionId, const Event &event)
{
    const auto it = m_blockIndex.constFind(executionId);
    if (it == m_blockIndex.constEnd())
        return;
    Block &block = m_blocks[*it];
    renderEvent(block, event);
    if (event.kind == Event::Kind::Done) {
        for (int i = 0; i < m_followed.size(); ++i) {
            if (m_followed.at(i)->id() == executionId) {
                m_followed.removeAt(i);
                break;
            }
        }
    }
}

void OutputView::renderEvent(Block &block, const Event &event)
{
    // A clear_output that waited clears once output arrives (an update of a display is none).
    if (block.clearPending
        && (event.kind == Event::Kind::Stream || event.kind == Event::Kind::Result
            || event.kind == Event::Kind::Error
            || (event.kind == Event::Kind::Display && !event.fields.value(QLatin1String("update")).toBool()))) {
        block.clearPending = false;
        clearBlockOutput(block);
    }
    switch (event.kind) {
    case Event::Kind::Started:
        block.executionCount = event.fields.value(QLatin1String("execution_count")).toInt();
        if (!block.blankPrompt.isNull() && block.executionCount > 0) {
            // A run that waited (for its interpreter, or in the queue) gets its number now.
            QTextCursor prompt = block.blankPrompt;
            prompt.setPosition(prompt.position() + int(tr("In [ ]").size()), QTextCursor::KeepAnchor);
            const QTextCharFormat format = prompt.charFormat();
            prompt.insertText(tr("In [%1]").arg(block.executionCount), format);
            block.blankPrompt = QTextCursor();
        }
        return;
    case Event::Kind::Stream:
        queueStream(block, event.fields.value(QLatin1String("name")).toString(),
                    event.fields.value(QLatin1String("text")).toString());
        return;
    default:
        break;
    }
    flushPending();
    switch (event.kind) {
    case Event::Kind::Display:
        renderDisplay(block, event);
        break;
    case Event::Kind::ClearOutput:
        if (event.fields.value(QLatin1String("wait")).toBool())
            block.clearPending = true;
        else
            clearBlockOutput(block);
        break;
    case Event::Kind::Result:
        renderBundle(block, event.fields.value(QLatin1String("data")).toObject(), true);
        break;
    case Event::Kind::Error:
        renderError(event);
        break;
    case Event::Kind::Done:
        renderDone(block, event);
        break;
    case Event::Kind::Other:
        if (event.type == QLatin1String("truncated")) {
            newParagraph();
            insertText(tr("The engine kept only the first %1 of this output.")
                               .arg(QLocale::system().formattedDataSize(
                                       event.fields.value(QLatin1String("limit_bytes")).toInteger())),
                       mutedFormat());
        } else if (event.type == QLatin1String("restored")) {
            newParagraph();
            insertText(restoredNotice(event.fields), mutedFormat());
        } else if (event.type == QLatin1String("state_reset")) {
            newParagraph();
            insertText(tr("A fresh interpreter: earlier state is gone."), mutedFormat());
        }
        break;
    default:
        break;
    }
    followEnd();
}

QString OutputView::restoredNotice(const QJsonObject &fields)
{
    const int replayed = fields.value(QLatin1String("replayed")).toInt();
    const int total = fields.value(QLatin1String("total")).toInt();
    const qint64 ms = fields.value(QLatin1String("duration_ms")).toInteger();
    if (fields.value(QLatin1String("complete")).toBool())
        return tr("Restored: %n earlier execution(s) replayed in %1 ms.", nullptr, replayed).arg(ms);
    const QJsonObject failed = fields.value(QLatin1String("failed_execution")).toObject();
    return tr("Partly restored: %1 of %2 earlier executions replayed; replaying execution [%3] "
              "failed with %4: %5")
        .arg(replayed)
        .arg(total)
        .arg(failed.value(QLatin1String("execution_count")).toInt())
        .arg(failed.value(QLatin1String("ename")).toString(),
             failed.value(QLatin1String("evalue")).toString());
}

void OutputView::queueStream(Block &block, const QString &name, QString text)
{
    if (text.isEmpty())
        return;
    if (block.shownStreamChars + block.pending.size() >= kStreamCharsShown) {
        // Over the cap: count it and keep only a tail, so a flood costs almost nothing here.
        block.hiddenStreamChars += text.size();
        m_hiddenTotal += text.size();
        block.tail += text;
        block.tailStream = name;
        if (block.tail.size() > 2 * kTailChars)
            block.tail = block.tail.right(kTailChars);
        return;
    }
    if (!block.pending.isEmpty() && block.pendingStream != name)
        flushBlock(block);
    const qint64 room = kStreamCharsShown - block.shownStreamChars - block.pending.size();
    if (text.size() > room) {
        const QString rest = text.mid(room);
        text.truncate(room);
        block.hiddenStreamChars += rest.size();
        m_hiddenTotal += rest.size();
        block.tail = rest.right(2 * kTailChars);
        block.tailStream = name;
    }
    block.pendingStream = name;
    block.pending += text;
    if (!m_flushTimer.isActive())
        m_flushTimer.start();
}

void OutputView::flushPending()
{
    for (Block &block : m_blocks) {
        if (!block.pending.isEmpty())
            flushBlock(block);
    }
}

void OutputView::flushBlock(Block &block)
{
    QString text = stripTerminalCodes(block.pending);
    block.shownStreamChars += block.pending.size();
    const QTextCharFormat format = streamFormat(block.pendingStream);
    block.pending.clear();
    if (!m_lastWasStream)
        newParagraph();
    // Lines are paragraphs; the document's trailing paragraph is the line being written.
    insertText(text, format);
    m_lastWasStream = true;
    if (block.shownStreamChars >= kStreamCharsShown && block.hiddenStreamChars == 0) {
        newParagraph();
        insertText(tr("⋯ more output is arriving; only the first %1 are kept in this view.")
                           .arg(humanSize(kStreamCharsShown)),
                   mutedFormat());
    }
    followEnd();
}

void OutputView::renderBundle(Block &block, const QJsonObject &data, bool isResult)
{
    if (isResult) {
        newParagraph();
        QTextCharFormat prompt;
        prompt.setFont(m_font);
        prompt.setFontWeight(QFont::Bold);
        prompt.setForeground(Themes::resultColour(QApplication::palette()));
        insertText(block.executionCount > 0 ? tr("Out[%1]").arg(block.executionCount) : tr("Out"),
                   prompt);
    }
    QTextCharFormat plain;
    plain.setFont(m_font);
    plain.setForeground(QApplication::palette().color(QPalette::Text));

    if (const QJsonValue table = data.value(QLatin1String(DataTableModel::kMime)); table.isObject()) {
        renderTable(table.toObject());
        return;
    }
    if (const std::optional<PlotImage> plot = PlotImage::fromBundle(data)) {
        insertImage(block, *plot);
        if (const QJsonValue chart = data.value(kChartMime); chart.isObject())
            insertJsonTree(chart, tr("Chart data"), 0);
        return;
    }
    if (data.contains(QLatin1String("text/html"))) {
        newParagraph();
        writer().insertHtml(data.value(QLatin1String("text/html")).toString());
        m_atParagraphStart = false;
        return;
    }
    if (data.contains(QLatin1String("text/markdown"))) {
        newParagraph();
        writer().insertMarkdown(data.value(QLatin1String("text/markdown")).toString());
        m_atParagraphStart = false;
        return;
    }
    if (data.contains(QLatin1String("text/latex"))) {
        // The source as written: the view has no TeX to typeset it with.
        newParagraph();
        insertText(data.value(QLatin1String("text/latex")).toString(), plain);
        return;
    }
    if (data.contains(QLatin1String("application/json"))) {
        insertJsonTree(data.value(QLatin1String("application/json")), QString(), 2);
        return;
    }
    if (const QJsonValue chart = data.value(kChartMime); chart.isObject()) {
        insertJsonTree(chart, tr("Chart data"), 2);
        return;
    }
    const QString text = stripTerminalCodes(data.value(QLatin1String("text/plain")).toString());
    if (text.isEmpty() && !isResult)
        return;
    newParagraph();
    insertText(text, plain);
}

void OutputView::renderDisplay(Block &block, const Event &event)
{
    const QJsonObject data = event.fields.value(QLatin1String("data")).toObject();
    const QString displayId = event.fields.value(QLatin1String("display_id")).toString();
    if (displayId.isEmpty()) {
        renderBundle(block, data, false);
        return;
    }
    if (event.fields.value(QLatin1String("update")).toBool()) {
        updateDisplay(block, displayId, data);
        return;
    }
    QTextFrame *frame = insertFrame();
    m_displays[displayId].append(frame);
    writeInto(frame, [&] { renderBundle(block, data, false); });
}

void OutputView::updateDisplay(Block &block, const QString &displayId, const QJsonObject &data)
{
    // Every place the display is shown, as Jupyter's frontends do; an id never shown here
    // (its run was cleared, or is not in this view) updates nothing.
    QList<QPointer<QTextFrame>> &frames = m_displays[displayId];
    frames.removeIf([this](const QPointer<QTextFrame> &frame) { return !frameIsShown(frame); });
    for (const QPointer<QTextFrame> &frame : std::as_const(frames)) {
        clearFrame(frame);
        writeInto(frame, [&] { renderBundle(block, data, false); });
    }
    if (frames.isEmpty())
        m_displays.remove(displayId);
    pruneImages();
}

void OutputView::clearBlockOutput(Block &block)
{
    block.pending.clear();
    block.shownStreamChars = 0;
    m_hiddenTotal -= block.hiddenStreamChars;
    block.hiddenStreamChars = 0;
    block.tail.clear();
    if (block.outputStart.isNull())
        return;
    // From its position only: a cursor that keeps its position on insertion still moves its
    // anchor.
    QTextCursor cursor(document());
    cursor.setPosition(block.outputStart.position());
    cursor.movePosition(QTextCursor::End, QTextCursor::KeepAnchor);
    cursor.removeSelectedText();
    m_atParagraphStart = false;
    m_lastWasStream = false;
    pruneImages();
    followEnd();
}

bool OutputView::frameIsShown(const QTextFrame *frame) const
{
    if (!frame || frame->document() != document())
        return false;
    // A frame whose text was removed may outlive its place in the document for a while.
    for (const QTextFrame *f = document()->frameAt(frame->firstPosition()); f; f = f->parentFrame()) {
        if (f == frame)
            return true;
    }
    return false;
}

QTextFrame *OutputView::insertFrame()
{
    QTextFrameFormat format;
    format.setBorder(0);
    format.setMargin(0);
    format.setPadding(0);
    QTextCursor &cursor = writer();
    QTextFrame *frame = cursor.insertFrame(format);
    // The write position is after the frame again: at the end, or after it in the frame that
    // is being redrawn.
    cursor = frame->lastCursorPosition();
    cursor.movePosition(QTextCursor::NextBlock);
    m_atParagraphStart = true;
    m_lastWasStream = false;
    return frame;
}

void OutputView::clearFrame(QTextFrame *frame)
{
    QTextCursor cursor = frame->firstCursorPosition();
    cursor.setPosition(frame->lastPosition(), QTextCursor::KeepAnchor);
    cursor.removeSelectedText();
}

void OutputView::writeInto(QTextFrame *frame, const std::function<void()> &draw)
{
    const bool wasInPlace = m_writingInPlace;
    const QTextCursor saved = m_write;
    const bool atStart = m_atParagraphStart, lastWasStream = m_lastWasStream;
    m_writingInPlace = true;
    m_write = frame->lastCursorPosition();
    m_atParagraphStart = true;
    m_lastWasStream = false;
    draw();
    m_writingInPlace = wasInPlace;
    m_write = saved;
    m_atParagraphStart = wasInPlace ? atStart : true;
    m_lastWasStream = wasInPlace ? lastWasStream : false;
}

qreal OutputView::imageRoom() const
{
    // The text area less the document's margins and a little air, never below a thumbnail.
    return qMax<qreal>(120, viewport()->width() - 2 * document()->documentMargin() - 8);
}

void OutputView::insertImage(Block &block, const PlotImage &plot)
{
    const QImage image = plot.image(devicePixelRatioF());
    const QString name = QStringLiteral("replhost-image://%1/%2").arg(block.executionId).arg(block.imageCount++);
    document()->addResource(QTextDocument::ImageResource, QUrl(name), image);
    const QSizeF own = QSizeF(image.size()) / image.devicePixelRatio();
    QTextImageFormat format;
    format.setName(name);
    QSizeF shown = own;
    if (shown.width() > imageRoom())
        shown = own * (imageRoom() / own.width());
    format.setWidth(shown.width());
    format.setHeight(shown.height());
    format.setToolTip(tr("Click for full size; right-click to save, copy or zoom"));
    newParagraph();
    QTextCursor &cursor = writer();
    ShownImage entry;
    entry.name = name;
    entry.ownSize = own;
    entry.plot = plot;
    entry.title = block.executionCount > 0 ? QStringLiteral("figure-%1-%2").arg(block.executionCount).arg(block.imageCount)
                                           : QStringLiteral("figure-%1").arg(block.imageCount);
    cursor.insertImage(format);
    // A cursor of its own before the image's character, which insertions before it move along.
    entry.at = QTextCursor(document());
    entry.at.setPosition(cursor.position() - 1);
    m_images.append(entry);
    m_atParagraphStart = false;
}

QTextCursor OutputView::imageSelection(const ShownImage &image) const
{
    QTextCursor at(document());
    at.setPosition(image.at.position());
    at.movePosition(QTextCursor::NextCharacter, QTextCursor::KeepAnchor);
    return at;
}

bool OutputView::imageIsShown(const ShownImage &image) const
{
    QTextCursor at = imageSelection(image);
    const QTextCharFormat format = at.charFormat();
    return at.hasSelection() && format.isImageFormat() && format.toImageFormat().name() == image.name;
}

void OutputView::pruneImages()
{
    m_images.removeIf([this](const ShownImage &image) { return !imageIsShown(image); });
}

void OutputView::fitImages()
{
    pruneImages();
    const qreal room = imageRoom();
    for (const ShownImage &image : std::as_const(m_images)) {
        QSizeF shown = image.ownSize;
        if (!image.fullSize && shown.width() > room)
            shown = image.ownSize * (room / image.ownSize.width());
        QTextCursor at = imageSelection(image);
        QTextImageFormat format = at.charFormat().toImageFormat();
        if (qFuzzyCompare(format.width(), shown.width()) && qFuzzyCompare(format.height(), shown.height()))
            continue;
        format.setWidth(shown.width());
        format.setHeight(shown.height());
        at.setCharFormat(format);
    }
}

int OutputView::imageCount() const
{
    return int(m_images.size());
}

QSizeF OutputView::imageShownSize(int index) const
{
    if (index < 0 || index >= m_images.size())
        return {};
    const QTextCursor at = imageSelection(m_images.at(index));
    const QTextImageFormat format = at.charFormat().toImageFormat();
    return QSizeF(format.width(), format.height());
}

QRect OutputView::imageRect(int index) const
{
    if (index < 0 || index >= m_images.size())
        return {};
    const int position = m_images.at(index).at.position();
    const QTextBlock block = document()->findBlock(position);
    const QTextLayout *layout = block.layout();
    if (!layout)
        return {};
    const int inBlock = position - block.position();
    const QTextLine line = layout->lineForTextPosition(inBlock);
    if (!line.isValid())
        return {};
    const QRectF blockRect = document()->documentLayout()->blockBoundingRect(block);
    const QSizeF size = imageShownSize(index);
    // The image sits on the line's baseline.
    const QPointF topLeft(blockRect.left() + line.cursorToX(inBlock),
                          blockRect.top() + line.y() + line.ascent() - size.height());
    return QRectF(topLeft - QPointF(horizontalScrollBar()->value(), verticalScrollBar()->value()), size)
            .toAlignedRect();
}

int OutputView::imageAt(const QPoint &viewportPos) const
{
    for (int i = 0; i < m_images.size(); ++i) {
        if (imageIsShown(m_images.at(i)) && imageRect(i).contains(viewportPos))
            return i;
    }
    return -1;
}

bool OutputView::isImageFullSize(int index) const
{
    return index >= 0 && index < m_images.size() && m_images.at(index).fullSize;
}

void OutputView::setImageFullSize(int index, bool fullSize)
{
    if (index < 0 || index >= m_images.size())
        return;
    m_images[index].fullSize = fullSize;
    fitImages();
}

const PlotImage &OutputView::image(int index) const
{
    return m_images.at(index).plot;
}

QMenu *OutputView::createImageMenu(int index, QWidget *parent)
{
    auto *menu = new QMenu(parent);
    if (index < 0 || index >= m_images.size())
        return menu;
    const ShownImage &shown = m_images.at(index);
    shown.plot.addActions(menu, this, shown.title);
    menu->addSeparator();
    QAction *full = menu->addAction(shown.fullSize ? tr("Fit to Width") : tr("Show at Full Size"));
    full->setObjectName(QStringLiteral("imageFullSize"));
    const QString name = shown.name;
    connect(full, &QAction::triggered, this, [this, name] {
        for (int i = 0; i < m_images.size(); ++i) {
            if (m_images.at(i).name == name)
                setImageFullSize(i, !m_images.at(i).fullSize);
        }
    });
    return menu;
}

void OutputView::renderTable(const QJsonObject &table)
{
    const DataTableModel model(table);
    const int rows = qMin(model.rowCount(), kTableRowsShown);
    const int columns = qMin(model.columnCount(), kTableColumnsShown);
    if (columns == 0) {
        newParagraph();
        insertText(tr("(an empty table)"), mutedFormat());
        return;
    }
    newParagraph();
    const QPalette palette = QApplication::palette();
    QTextTableFormat format;
    format.setBorder(1);
    format.setBorderStyle(QTextFrameFormat::BorderStyle_Solid);
    format.setBorderBrush(palette.color(QPalette::Mid));
    format.setBorderCollapse(true);
    format.setCellPadding(3);
    format.setCellSpacing(0);
    format.setHeaderRowCount(1);
    QTextCursor &cursor = writer();
    QTextTable *t = cursor.insertTable(rows + 1, columns, format);
    QTextCharFormat header;
    header.setFont(m_font);
    header.setFontWeight(QFont::Bold);
    header.setForeground(palette.color(QPalette::Text));
    QTextCharFormat cell = header;
    cell.setFontWeight(QFont::Normal);
    const QColor headerBackground = palette.color(QPalette::AlternateBase);
    for (int c = 0; c < columns; ++c) {
        QTextTableCell head = t->cellAt(0, c);
        QTextCharFormat headCell = head.format();
        headCell.setBackground(headerBackground);
        head.setFormat(headCell);
        head.firstCursorPosition().insertText(model.headerData(c, Qt::Horizontal).toString(), header);
        for (int r = 0; r < rows; ++r) {
            QTextCursor at = t->cellAt(r + 1, c).firstCursorPosition();
            const QModelIndex index = model.index(r, c);
            if (model.data(index, Qt::TextAlignmentRole).value<Qt::Alignment>() & Qt::AlignRight) {
                QTextBlockFormat right;
                right.setAlignment(Qt::AlignRight);
                at.setBlockFormat(right);
            }
            at.insertText(model.data(index).toString(),
                          model.hasIndex() && c == 0 ? header : cell);
        }
    }
    cursor = t->lastCursorPosition();
    cursor.movePosition(QTextCursor::NextBlock);
    const int id = m_nextId++;
    m_tables.insert(id, table);
    newParagraph();
    const int dataColumns = model.columnCount() - (model.hasIndex() ? 1 : 0);
    QString summary = (model.totalRows() == 1 ? tr("1 row") : tr("%1 rows").arg(model.totalRows()))
                      + (dataColumns == 1 ? tr(" × 1 column") : tr(" × %1 columns").arg(dataColumns));
    if (rows < model.totalRows())
        summary += tr(", the first %1 shown").arg(rows);
    if (columns < model.columnCount())
        summary += tr(", %1 columns shown").arg(columns);
    insertText(summary + QStringLiteral(" · "), mutedFormat());
    QTextCharFormat link = mutedFormat();
    link.setAnchor(true);
    link.setAnchorHref(QStringLiteral("%1:%2").arg(kTableScheme).arg(id));
    link.setForeground(palette.color(QPalette::Link));
    link.setFontUnderline(true);
    insertText(tr("Open as table…"), link);
}

void OutputView::insertJsonTree(const QJsonValue &value, const QString &title, int foldDepth)
{
    const int id = m_nextId++;
    JsonTree tree;
    tree.value = value;
    tree.title = title;
    tree.foldDepth = foldDepth;
    tree.frame = insertFrame();
    m_trees.insert(id, tree);
    drawJsonTree(id);
}

void OutputView::drawJsonTree(int treeId)
{
    const JsonTree tree = m_trees.value(treeId);
    if (!frameIsShown(tree.frame)) {
        m_trees.remove(treeId);
        return;
    }
    clearFrame(tree.frame);
    writeInto(tree.frame, [&] { drawJsonNode(treeId, tree.title, tree.value, QStringLiteral("$"), 0); });
}

void OutputView::drawJsonNode(int treeId, const QString &key, const QJsonValue &value,
                              const QString &path, int depth)
{
    const JsonTree &tree = m_trees[treeId];
    const QPalette palette = QApplication::palette();
    QTextCharFormat keyFormat;
    keyFormat.setFont(m_font);
    keyFormat.setForeground(palette.color(QPalette::Text));
    keyFormat.setFontWeight(QFont::DemiBold);
    QTextCharFormat valueFormat = keyFormat;
    valueFormat.setFontWeight(QFont::Normal);
    QTextCharFormat stringFormat = valueFormat;
    stringFormat.setForeground(Themes::resultColour(palette));

    newParagraph();
    QTextBlockFormat indent;
    indent.setLeftMargin(depth * 18);
    writer().setBlockFormat(indent);
    const bool container = value.isArray() || value.isObject();
    if (!container) {
        if (!key.isEmpty())
            insertText(key + QStringLiteral(": "), keyFormat);
        if (value.isString())
            insertText(QStringLiteral("\"%1\"").arg(value.toString()), stringFormat);
        else
            insertText(DataTableModel::cellText(value).isEmpty() ? QStringLiteral("null")
                                                                 : DataTableModel::cellText(value),
                       valueFormat);
        return;
    }
    const int size = value.isArray() ? int(value.toArray().size()) : int(value.toObject().size());
    const bool folded = (depth >= tree.foldDepth) != tree.toggled.contains(path);
    QTextCharFormat toggle = keyFormat;
    toggle.setAnchor(true);
    toggle.setAnchorHref(QStringLiteral("%1:%2/%3").arg(kJsonScheme).arg(treeId).arg(path));
    toggle.setForeground(palette.color(QPalette::Link));
    insertText(folded ? QStringLiteral("▸ ") : QStringLiteral("▾ "), toggle);
    if (!key.isEmpty()) {
        toggle.setForeground(palette.color(QPalette::Text));
        insertText(key, toggle);
        insertText(QStringLiteral(": "), keyFormat);
    }
    QTextCharFormat summary = mutedFormat();
    insertText(value.isArray() ? (size == 1 ? tr("[1 item]") : tr("[%1 items]").arg(size))
                               : (size == 1 ? tr("{1 key}") : tr("{%1 keys}").arg(size)),
               summary);
    if (folded)
        return;
    int shown = 0;
    if (value.isArray()) {
        const QJsonArray array = value.toArray();
        for (int i = 0; i < array.size() && shown < kJsonItemsShown; ++i, ++shown)
            drawJsonNode(treeId, QString::number(i), array.at(i), path + QLatin1Char('/') + QString::number(i), depth + 1);
    } else {
        const QJsonObject object = value.toObject();
        for (auto it = object.begin(); it != object.end() && shown < kJsonItemsShown; ++it, ++shown)
            drawJsonNode(treeId, it.key(), it.value(), path + QLatin1Char('/') + QString::number(shown), depth + 1);
    }
    if (size > shown) {
        newParagraph();
        QTextBlockFormat more;
        more.setLeftMargin((depth + 1) * 18);
        writer().setBlockFormat(more);
        insertText(tr("⋯ %n more", nullptr, size - shown), mutedFormat());
    }
}

void OutputView::renderError(const Event &event)
{
    const QString ename = event.fields.value(QLatin1String("ename")).toString();
    const QString evalue = event.fields.value(QLatin1String("evalue")).toString();
    QStringList lines;
    for (const QJsonValue &line : event.fields.value(QLatin1String("traceback")).toArray())
        lines += stripTerminalCodes(line.toString()).split(QLatin1Char('\n'));
    while (!lines.isEmpty() && lines.last().trimmed().isEmpty())
        lines.removeLast();
    if (lines.isEmpty())
        lines << (evalue.isEmpty() ? ename : ename + QStringLiteral(": ") + evalue);

    const QColor background = Themes::errorBackground(QApplication::palette());
    QTextCharFormat plain;
    plain.setFont(m_font);
    plain.setForeground(QApplication::palette().color(QPalette::Text));
    QTextCharFormat frame = plain;
    frame.setForeground(Themes::errorColour(QApplication::palette()));
    QTextCharFormat final = frame;
    final.setFontWeight(QFont::Bold);
    static const QRegularExpression frameLine(QStringLiteral("^\\s*File \"|^\\s*at |^Traceback"));
    for (int i = 0; i < lines.size(); ++i) {
        newParagraph(background);
        const QString &line = lines.at(i);
        const bool isLast = i == lines.size() - 1;
        insertText(line.isEmpty() ? QStringLiteral(" ") : line,
                   isLast ? final : frameLine.match(line).hasMatch() ? frame : plain);
    }
}

void OutputView::renderDone(Block &block, const Event &event)
{
    block.finished = true;
    if (block.hiddenStreamChars > 0) {
        newParagraph();
        QTextCharFormat notice = mutedFormat();
        insertText(tr("⋯ %1 of output not shown here; the last %2 follow. ")
                           .arg(humanSize(block.hiddenStreamChars), humanSize(kTailChars)),
                   notice);
        QTextCharFormat link = notice;
        link.setAnchor(true);
        link.setAnchorHref(kSaveScheme + QStringLiteral(":") + block.executionId);
        link.setForeground(QApplication::palette().color(QPalette::Link));
        link.setFontUnderline(true);
        insertText(tr("Save the full output…"), link);
        newParagraph();
        QString tail = block.tail.right(kTailChars);
        const int firstBreak = tail.indexOf(QLatin1Char('\n'));
        if (firstBreak >= 0 && firstBreak < tail.size() - 1)
            tail = tail.mid(firstBreak + 1);  // start at a line boundary
        if (tail.endsWith(QLatin1Char('\n')))
            tail.chop(1);
        insertText(stripTerminalCodes(tail), streamFormat(block.tailStream));
    }
    const QString status = event.fields.value(QLatin1String("status")).toString();
    qint64 duration = event.fields.value(QLatin1String("duration_ms")).toInteger(-1);
    if (duration < 0) {
        const std::shared_ptr<core::Execution> execution = block.execution.lock();
        duration = execution ? execution->durationMs() : block.recordedDurationMs;
    }
    newParagraph();
    QTextCharFormat footer = mutedFormat();
    QFont small = m_font;
    if (small.pointSizeF() > 0)
        small.setPointSizeF(small.pointSizeF() * 0.85);
    footer.setFont(small);
    if (status != QLatin1String("ok"))
        footer.setForeground(Themes::errorColour(QApplication::palette()));
    QString text = status == QLatin1String("ok") ? QStringLiteral("✓ ") : QStringLiteral("✗ ");
    text += status;
    if (duration >= 0)
        text += QStringLiteral(" · ") + humanDuration(duration);
    if (event.fields.contains(QLatin1String("exit_code")))
        text += tr(" · exit code %1").arg(event.fields.value(QLatin1String("exit_code")).toInt());
    if (event.fields.value(QLatin1String("state_lost")).toBool())
        text += tr(" · the interpreter was restarted; earlier state is gone");
    insertText(text, footer);
}

void OutputView::contextMenuEvent(QContextMenuEvent *event)
{
    const int index = imageAt(event->pos());
    if (index < 0) {
        QTextBrowser::contextMenuEvent(event);
        return;
    }
    QMenu *menu = createImageMenu(index, this);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->popup(event->globalPos());
}

void OutputView::mousePressEvent(QMouseEvent *event)
{
    m_pressedAt = event->position().toPoint();
    QTextBrowser::mousePressEvent(event);
}

void OutputView::mouseReleaseEvent(QMouseEvent *event)
{
    QTextBrowser::mouseReleaseEvent(event);
    // A click (not a drag that selects) on an image switches it between fitted and full size.
    const QPoint at = event->position().toPoint();
    if (event->button() != Qt::LeftButton || (at - m_pressedAt).manhattanLength() > 4)
        return;
    if (const int index = imageAt(at); index >= 0)
        setImageFullSize(index, !isImageFullSize(index));
}

void OutputView::changeEvent(QEvent *event)
{
    QTextBrowser::changeEvent(event);
    if (event->type() == QEvent::FontChange && m_font == QFont())
        m_font = font();
}

} // namespace replhost::gui
