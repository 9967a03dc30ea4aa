// SPDX-License-Identifier: Apache-2.0
// The output view on its own (no engine): it follows new runs while the user is at its end, and
// stays where the user scrolled to otherwise, offering a way back to the newest output; display
// updates redraw in place and clear_output clears a run's output (tst_richworkbench has the same
// from a real interpreter).
#include "gui/outputview.h"

#include <QBuffer>
#include <QImage>
#include <QJsonObject>

#include <QScrollBar>
#include <QTest>
#include <QToolButton>

using namespace replhost::gui;

class tst_OutputView : public QObject {
    Q_OBJECT
private slots:
    void newRunsAreFollowedAtTheEnd();
    void scrolledUpViewStaysAndOffersJumpToLatest();
    void updateRedrawsTheDisplayInPlace();
    void clearOutputClearsOnlyTheRunsOutput();
    void clearOutputWithWaitClearsAtTheNextOutput();
    void everyImageFormatIsDrawnAndSaved_data();
    void everyImageFormatIsDrawnAndSaved();
    void markdownIsRenderedAndLatexShownAsWritten();

private:
    static void addRuns(OutputView &view, int from, int count);
};

void tst_OutputView::addRuns(OutputView &view, int from, int count)
{
    for (int i = from; i < from + count; ++i)
        view.addRecorded(QStringLiteral("run-%1").arg(i), i, QStringLiteral("print(%1)\nx = %1").arg(i), {});
}

void tst_OutputView::newRunsAreFollowedAtTheEnd()
{
    OutputView view;
    view.resize(400, 200);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    addRuns(view, 1, 40);
    const QScrollBar *bar = view.verticalScrollBar();
    QVERIFY(bar->maximum() > 0);
    QCOMPARE(bar->value(), bar->maximum());
    QVERIFY(view.isFollowing());
    const auto *jump = view.findChild<QToolButton *>(QStringLiteral("jumpToLatest"));
    QVERIFY(jump);
    QVERIFY(!jump->isVisible());
    // Still at the end when the view gets narrower and the text wraps to more lines.
    view.resize(150, 200);
    QCOMPARE(bar->value(), bar->maximum());
}

void tst_OutputView::scrolledUpViewStaysAndOffersJumpToLatest()
{
    OutputView view;
    view.resize(400, 200);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    addRuns(view, 1, 40);
    QScrollBar *bar = view.verticalScrollBar();
    auto *jump = view.findChild<QToolButton *>(QStringLiteral("jumpToLatest"));
    QVERIFY(jump);

    bar->setValue(bar->maximum() / 3);  // the user reads an earlier run
    const int reading = bar->value();
    QVERIFY(!view.isFollowing());
    addRuns(view, 41, 5);
    QCOMPARE(bar->value(), reading);
    QVERIFY(bar->value() < bar->maximum());
    QVERIFY(jump->isVisible());
    QVERIFY(!jump->text().isEmpty());

    QTest::mouseClick(jump, Qt::LeftButton);
    QCOMPARE(bar->value(), bar->maximum());
    QVERIFY(!jump->isVisible());
    QVERIFY(view.isFollowing());
    addRuns(view, 46, 5);
    QCOMPARE(bar->value(), bar->maximum());

    // Scrolling back down by hand follows again too.
    bar->setValue(0);
    addRuns(view, 51, 2);
    QVERIFY(jump->isVisible());
    bar->setValue(bar->maximum());
    QVERIFY(!jump->isVisible());
    addRuns(view, 53, 2);
    QCOMPARE(bar->value(), bar->maximum());
}

namespace {

using replhost::sdk::Event;

QJsonObject html(const QString &text)
{
    return QJsonObject{{QStringLiteral("text/html"), text}, {QStringLiteral("text/plain"), text}};
}

Event display(const QString &text, const QString &displayId = {}, bool update = false)
{
    Event event = Event::display(QStringLiteral("run"), html(text));
    if (!displayId.isEmpty())
        event.fields.insert(QStringLiteral("display_id"), displayId);
    if (update)
        event.fields.insert(QStringLiteral("update"), true);
    return event;
}

} // namespace

void tst_OutputView::updateRedrawsTheDisplayInPlace()
{
    OutputView view;
    view.addRecorded(QStringLiteral("run"), 1, QStringLiteral("work()"),
                     {Event::started(QStringLiteral("run"), 1), display(QStringLiteral("step one"), QStringLiteral("bar")),
                      Event::stream(QStringLiteral("run"), QStringLiteral("stdout"), QStringLiteral("printed below\n")),
                      display(QStringLiteral("step two"), QStringLiteral("bar"), true),
                      display(QStringLiteral("other"), QStringLiteral("unknown"), true),
                      Event::done(QStringLiteral("run"), QStringLiteral("ok"))});
    const QString text = view.toPlainText();
    QVERIFY2(!text.contains(QLatin1String("step one")), qPrintable(text));
    QVERIFY2(text.indexOf(QLatin1String("step two")) >= 0
                     && text.indexOf(QLatin1String("step two")) < text.indexOf(QLatin1String("printed below")),
             qPrintable(text));
    QVERIFY(!text.contains(QLatin1String("other")));  // an update of nothing shown shows nothing
}

void tst_OutputView::clearOutputClearsOnlyTheRunsOutput()
{
    OutputView view;
    view.addRecorded(QStringLiteral("before"), 1, QStringLiteral("setup()"),
                     {Event::stream(QStringLiteral("before"), QStringLiteral("stdout"), QStringLiteral("earlier run\n")),
                      Event::done(QStringLiteral("before"), QStringLiteral("ok"))});
    view.addRecorded(QStringLiteral("run"), 2, QStringLiteral("work()"),
                     {Event::stream(QStringLiteral("run"), QStringLiteral("stdout"), QStringLiteral("old line\n")),
                      display(QStringLiteral("old display")), Event::clearOutput(QStringLiteral("run")),
                      Event::stream(QStringLiteral("run"), QStringLiteral("stdout"), QStringLiteral("new line\n")),
                      Event::done(QStringLiteral("run"), QStringLiteral("ok"))});
    const QString text = view.toPlainText();
    QVERIFY2(!text.contains(QLatin1String("old")), qPrintable(text));
    QVERIFY2(text.contains(QLatin1String("new line")), qPrintable(text));
    QVERIFY(text.contains(QLatin1String("earlier run")));
    QVERIFY(text.contains(QLatin1String("work()")));
}

void tst_OutputView::clearOutputWithWaitClearsAtTheNextOutput()
{
    OutputView view;
    view.addRecorded(QStringLiteral("run"), 1, QStringLiteral("animate()"),
                     {display(QStringLiteral("frame 0")), Event::clearOutput(QStringLiteral("run"), true)});
    QVERIFY2(view.toPlainText().contains(QLatin1String("frame 0")), qPrintable(view.toPlainText()));
    view.addRecorded(QStringLiteral("next"), 2, QStringLiteral("animate()"),
                     {display(QStringLiteral("frame 0")), Event::clearOutput(QStringLiteral("next"), true),
                      display(QStringLiteral("frame 1")), Event::clearOutput(QStringLiteral("next"), true),
                      display(QStringLiteral("frame 2"))});
    const QString text = view.toPlainText();
    QCOMPARE(text.count(QLatin1String("frame 0")), 1);  // the first run's stays
    QVERIFY2(!text.contains(QLatin1String("frame 1")), qPrintable(text));
    QVERIFY(text.contains(QLatin1String("frame 2")));
}

void tst_OutputView::everyImageFormatIsDrawnAndSaved_data()
{
    QTest::addColumn<QString>("mime");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QStringList>("formats");
    const auto encoded = [](const char *format) {
        QImage image(80, 40, QImage::Format_RGB32);
        image.fill(Qt::darkCyan);
        QByteArray bytes;
        QBuffer buffer(&bytes);
        buffer.open(QIODevice::WriteOnly);
        image.save(&buffer, format);
        return QString::fromLatin1(bytes.toBase64());
    };
    QTest::newRow("png") << "image/png" << encoded("PNG") << QStringList{QStringLiteral("png")};
    QTest::newRow("jpeg") << "image/jpeg" << encoded("JPEG") << QStringList{QStringLiteral("png")};
    QTest::newRow("svg") << "image/svg+xml"
                         << "<svg xmlns='http://www.w3.org/2000/svg' width='80' height='40'><rect width='80' height='40'/></svg>"
                         << QStringList{QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf")};
}

void tst_OutputView::everyImageFormatIsDrawnAndSaved()
{
    QFETCH(QString, mime);
    QFETCH(QString, value);
    QFETCH(QStringList, formats);
    OutputView view;
    view.resize(400, 300);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.addRecorded(QStringLiteral("run"), 1, QStringLiteral("show()"),
                     {Event::display(QStringLiteral("run"), QJsonObject{{mime, value}, {QStringLiteral("text/plain"), QStringLiteral("<image>")}})});
    QCOMPARE(view.imageCount(), 1);
    QCOMPARE(view.image(0).size(), QSize(80, 40));
    QCOMPARE(view.imageShownSize(0), QSizeF(80, 40));  // smaller than the pane: its own size
    QVERIFY(!view.toPlainText().contains(QLatin1String("<image>")));
    QCOMPARE(view.image(0).saveFormats(), formats);
}

void tst_OutputView::markdownIsRenderedAndLatexShownAsWritten()
{
    OutputView view;
    view.addRecorded(QStringLiteral("run"), 1, QStringLiteral("show()"),
                     {Event::display(QStringLiteral("run"), QJsonObject{{QStringLiteral("text/markdown"), QStringLiteral("# Title\n\nsome **bold** words")},
                                                                        {QStringLiteral("text/plain"), QStringLiteral("plain markdown")}}),
                      Event::display(QStringLiteral("run"), QJsonObject{{QStringLiteral("text/latex"), QStringLiteral("$x^2 + y^2$")},
                                                                        {QStringLiteral("text/plain"), QStringLiteral("plain latex")}})});
    const QString text = view.toPlainText();
    QVERIFY2(text.contains(QLatin1String("some bold words")), qPrintable(text));
    QVERIFY(!text.contains(QLatin1String("**")));
    QVERIFY(!text.contains(QLatin1String("# Title")));
    QVERIFY(text.contains(QLatin1String("$x^2 + y^2$")));
    QVERIFY(!text.contains(QLatin1String("plain")));
}

QTEST_MAIN(tst_OutputView)
#include "tst_outputview.moc"
