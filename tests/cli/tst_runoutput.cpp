// SPDX-License-Identifier: Apache-2.0
// What `replhost-cli run` writes of displays that change: on a terminal an update rewrites the
// display in place and clear_output clears the run's output, over rows still on the screen
// only; in a pipe every state is written as it comes and a clear is left out. The escape
// sequences are compared as written.

#include "runoutput.h"

#include <QTest>

#include <unistd.h>

using replhost::cli::RunOutput;

namespace {

const QString kUp = QStringLiteral("\x1b[%1A");
const QString kErase = QStringLiteral("\x1b[J");

} // namespace

class tst_RunOutput : public QObject {
    Q_OBJECT

private slots:
    void writesWhatTheRunShows_data();
    void writesWhatTheRunShows();
};

void tst_RunOutput::writesWhatTheRunShows_data()
{
    QTest::addColumn<bool>("terminal");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("columns");
    // "out:TEXT", "err:TEXT", "display:ID:TEXT", "update:ID:TEXT", "clear", "clear-wait", "input"
    QTest::addColumn<QStringList>("steps");
    QTest::addColumn<QString>("written");  // fd 2's text in [brackets]

    const QStringList progress{"display:p:step 0", "update:p:step 1", "update:p:step 2"};
    QTest::newRow("an update rewrites the last display in place")
            << true << 24 << 80 << progress
            << "step 0\n" + kUp.arg(1) + "\r" + kErase + "step 1\n" + kUp.arg(1) + "\r" + kErase + "step 2\n";
    QTest::newRow("in a pipe every update is a line of its own")
            << false << 0 << 0 << progress << "step 0\nstep 1\nstep 2\n";
    QTest::newRow("a display begun mid-line is rewritten from its column")
            << true << 24 << 80 << QStringList{"out:so far: ", "display:p:1%", "update:p:2%"}
            << "so far: 1%\n" + kUp.arg(1) + "\r\x1b[8C" + kErase + "2%\n";
    QTest::newRow("a display of several lines is rewritten whole")
            << true << 24 << 80 << QStringList{"display:p:a\nb\nc", "update:p:d"}
            << "a\nb\nc\n" + kUp.arg(3) + "\r" + kErase + "d\n";
    QTest::newRow("wrapped lines count as rows")
            << true << 24 << 10 << QStringList{"display:p:" + QString(25, QLatin1Char('x')), "update:p:y"}
            << QString(25, QLatin1Char('x')) + "\n" + kUp.arg(3) + "\r" + kErase + "y\n";
    QTest::newRow("a line that fills the width exactly is one row")
            << true << 24 << 10 << QStringList{"display:p:" + QString(10, QLatin1Char('x')), "update:p:y"}
            << QString(10, QLatin1Char('x')) + "\n" + kUp.arg(1) + "\r" + kErase + "y\n";
    QTest::newRow("escape sequences and UTF-8 take their columns only")
            << true << 24 << 10 << QStringList{"out:\x1b[31m\u00e9\u00e9\u00e9\u00e9\u00e9\x1b[0m", "display:p:a", "update:p:b"}
            << "\x1b[31m\u00e9\u00e9\u00e9\u00e9\u00e9\x1b[0ma\n" + kUp.arg(1) + "\r\x1b[5C" + kErase + "b\n";
    QTest::newRow("after other output an update is a new line, then in place again")
            << true << 24 << 80 << QStringList{"display:p:step 0", "out:note\n", "update:p:step 1", "update:p:step 2"}
            << "step 0\nnote\nstep 1\n" + kUp.arg(1) + "\r" + kErase + "step 2\n";
    QTest::newRow("stderr on the terminal comes after the display too")
            << true << 24 << 80 << QStringList{"display:p:step 0", "err:warning\n", "update:p:step 1"}
            << "step 0\n[warning\n]step 1\n";
    QTest::newRow("an update of another display is a new line")
            << true << 24 << 80 << QStringList{"display:p:p", "display:q:q", "update:p:p2"} << "p\nq\np2\n";
    QTest::newRow("a display scrolled off the screen is not rewritten")
            << true << 3 << 80 << QStringList{"display:p:a\nb\nc", "update:p:d"} << "a\nb\nc\nd\n";
    QTest::newRow("a question ends what can be rewritten")
            << true << 24 << 80 << QStringList{"display:p:step 0", "input", "update:p:step 1"}
            << "step 0\nstep 1\n";
    QTest::newRow("clear_output clears the run's output")
            << true << 24 << 80 << QStringList{"out:one\ntwo\n", "clear", "out:three\n"}
            << "one\ntwo\n" + kUp.arg(2) + "\r" + kErase + "three\n";
    QTest::newRow("clear_output with wait clears when the next output comes")
            << true << 24 << 80 << QStringList{"display:p:frame 0", "clear-wait", "display:p:frame 1"}
            << "frame 0\n" + kUp.arg(1) + "\r" + kErase + "frame 1\n";
    QTest::newRow("clear_output with wait and nothing after it clears nothing")
            << true << 24 << 80 << QStringList{"out:kept\n", "clear-wait"} << "kept\n";
    QTest::newRow("clear_output beyond the screen clears the screen")
            << true << 3 << 80 << QStringList{"out:1\n2\n3\n4\n", "clear", "out:5\n"} << "1\n2\n3\n4\n\x1b[H\x1b[J5\n";
    QTest::newRow("clear_output in a pipe is left out")
            << false << 0 << 0 << QStringList{"out:one\n", "clear", "clear-wait", "out:two\n"} << "one\ntwo\n";
    QTest::newRow("clear_output clears only what came after the last question")
            << true << 24 << 80 << QStringList{"out:before\n", "input", "out:after\n", "clear"}
            << "before\nafter\n" + kUp.arg(1) + "\r" + kErase;
}

void tst_RunOutput::writesWhatTheRunShows()
{
    QFETCH(bool, terminal);
    QFETCH(int, rows);
    QFETCH(int, columns);
    QFETCH(QStringList, steps);
    QFETCH(QString, written);

    std::string text;
    RunOutput output(
            terminal,
            [&text](int fd, std::string_view part) {
                text += fd == STDERR_FILENO ? "[" + std::string(part) + "]" : std::string(part);
            },
            [&] { return RunOutput::Size{rows, columns}; });
    for (const QString &step : steps) {
        const QString kind = step.section(QLatin1Char(':'), 0, 0);
        const std::string rest = step.section(QLatin1Char(':'), 1).toStdString();
        if (kind == QLatin1String("out")) {
            output.out(rest);
        } else if (kind == QLatin1String("err")) {
            output.err(rest);
        } else if (kind == QLatin1String("display") || kind == QLatin1String("update")) {
            const std::size_t colon = rest.find(':');
            output.display(rest.substr(0, colon), rest.substr(colon + 1), kind == QLatin1String("update"));
        } else if (kind == QLatin1String("clear")) {
            output.clear(false);
        } else if (kind == QLatin1String("clear-wait")) {
            output.clear(true);
        } else if (kind == QLatin1String("input")) {
            output.interruptedByInput();
        } else {
            QFAIL(qPrintable(QStringLiteral("unknown step ") + step));
        }
    }
    QCOMPARE(QString::fromStdString(text), written);
}

QTEST_GUILESS_MAIN(tst_RunOutput)
#include "tst_runoutput.moc"
