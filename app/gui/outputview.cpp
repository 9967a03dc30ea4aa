// SPDX-License-Identifier: Apache-2.0
#include "outputview.h"

#include "themes.h"

#include <QApplication>
#include <QBuffer>
#include <QImage>
#include <QJsonArray>
#include <QLocale>
#include <QPainter>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSvgRenderer>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QToolButton>
#include <QUrl>

#include <algorithm>

namespace replhost::gui {

using sdk::Event;

namespace {

constexpr int kFlushIntervalMs = 40;
constexpr int kMaxImageWidth = 640;
constexpr int kCodeLinesShown = 8;
const QString kSaveScheme = QStringLiteral("replhost-output");

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
        if (url.scheme() == kSaveScheme)
            emit saveFullOutputRequested(url.path());
    });
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
    clear();
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

void OutputView::resizeEvent(QResizeEvent *event)
{
    QTextBrowser::resizeEvent(event);
    placeJumpButton();
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

void OutputView::newParagraph(const QColor &background)
{
    QTextCursor cursor(document());
    cursor.movePosition(QTextCursor::End);
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
    QTextCursor cursor(document());
    cursor.movePosition(QTextCursor::End);
    cursor.insertText(text, format);
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
        renderBundle(block, event.fields.value(QLatin1String("data")).toObject(), false);
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
    QTextCursor cursor(document());
    const auto insertImage = [&](const QImage &image) {
        if (image.isNull())
            return false;
        const QString name = QStringLiteral("replhost-image://%1/%2")
                                     .arg(block.executionId).arg(block.imageCount++);
        document()->addResource(QTextDocument::ImageResource, QUrl(name), image);
        QTextImageFormat format;
        format.setName(name);
        const qreal ratio = image.devicePixelRatio();
        qreal width = image.width() / ratio, height = image.height() / ratio;
        if (width > kMaxImageWidth) {
            height = height * kMaxImageWidth / width;
            width = kMaxImageWidth;
        }
        format.setWidth(width);
        format.setHeight(height);
        newParagraph();
        cursor.movePosition(QTextCursor::End);
        cursor.insertImage(format);
        m_atParagraphStart = false;
        return true;
    };

    if (data.contains(QLatin1String("image/png"))) {
        const QByteArray bytes = QByteArray::fromBase64(
                data.value(QLatin1String("image/png")).toString().toLatin1());
        if (insertImage(QImage::fromData(bytes, "PNG")))
            return;
    }
    if (data.contains(QLatin1String("image/svg+xml"))) {
        QSvgRenderer renderer(data.value(QLatin1String("image/svg+xml")).toString().toUtf8());
        if (renderer.isValid()) {
            QSize size = renderer.defaultSize();
            if (size.isEmpty())
                size = QSize(400, 300);
            if (size.width() > kMaxImageWidth)
                size = size.scaled(kMaxImageWidth, kMaxImageWidth * 4, Qt::KeepAspectRatio);
            const qreal ratio = devicePixelRatioF();
            QImage image(size * ratio, QImage::Format_ARGB32_Premultiplied);
            image.setDevicePixelRatio(ratio);
            image.fill(Qt::transparent);
            QPainter painter(&image);
            renderer.render(&painter, QRectF(QPointF(0, 0), QSizeF(size)));
            painter.end();
            if (insertImage(image))
                return;
        }
    }
    if (data.contains(QLatin1String("text/html"))) {
        newParagraph();
        cursor.movePosition(QTextCursor::End);
        cursor.insertHtml(data.value(QLatin1String("text/html")).toString());
        m_atParagraphStart = false;
        return;
    }
    const QString text = stripTerminalCodes(data.value(QLatin1String("text/plain")).toString());
    if (text.isEmpty() && !isResult)
        return;
    newParagraph();
    QTextCharFormat format;
    format.setFont(m_font);
    format.setForeground(QApplication::palette().color(QPalette::Text));
    insertText(text, format);
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

void OutputView::changeEvent(QEvent *event)
{
    QTextBrowser::changeEvent(event);
    if (event->type() == QEvent::FontChange && m_font == QFont())
        m_font = font();
}

} // namespace replhost::gui
