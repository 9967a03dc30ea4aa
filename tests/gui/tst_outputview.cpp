// SPDX-License-Identifier: Apache-2.0
// The output view on its own (no engine): it follows new runs while the user is at its end, and
// stays where the user scrolled to otherwise, offering a way back to the newest output.
#include "gui/outputview.h"

#include <QScrollBar>
#include <QTest>
#include <QToolButton>

using namespace replhost::gui;

class tst_OutputView : public QObject {
    Q_OBJECT
private slots:
    void newRunsAreFollowedAtTheEnd();
    void scrolledUpViewStaysAndOffersJumpToLatest();

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

QTEST_MAIN(tst_OutputView)
#include "tst_outputview.moc"
