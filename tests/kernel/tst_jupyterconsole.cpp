// SPDX-License-Identifier: Apache-2.0
// `jupyter console` (Debian's jupyter-console) with replhost's kernels, typed into through a
// pseudo-terminal (python3-pexpect, consoledriver.py): the second cell uses what the first
// defined, and leaving the console shuts the kernel down and deletes its context.

#include "kerneltestbed.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

class tst_JupyterConsole : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY2(m_bed.start(), qPrintable(m_bed.error())); }
    void cleanupTestCase() { m_bed.stop(); }

    void secondCellUsesTheFirst_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("first");
        QTest::addColumn<QString>("firstPrinted");
        QTest::addColumn<QString>("second");
        QTest::addColumn<QString>("printed");

        QTest::newRow("python") << "python" << "x = 41" << "" << "print(x + 1)" << "42";
        QTest::newRow("python value") << "python" << "x = 41" << "" << "x + 1" << "Out[2]: 42";
        QTest::newRow("javascript") << "javascript" << "var x = 41" << "" << "console.log(x + 1)" << "42";
        QTest::newRow("typescript") << "typescript" << "var x: number = 41" << "" << "console.log(x + 1)" << "42";
        // Perl shows the value of an assignment.
        QTest::newRow("perl") << "perl" << "our $x = 41;" << "Out[1]: 41" << "print $x + 1, \"\\n\"" << "42";
        QTest::newRow("java") << "java" << "int x = 41;" << "" << "System.out.println(x + 1)" << "42";
        QTest::newRow("go") << "go" << "x := 41" << "" << "fmt.Println(x + 1)" << "42";
        QTest::newRow("bash") << "bash" << "x=41" << "" << "echo $((x + 1))" << "42";
    }

    void secondCellUsesTheFirst()
    {
        QFETCH(QString, language);
        QFETCH(QString, first);
        QFETCH(QString, firstPrinted);
        QFETCH(QString, second);
        QFETCH(QString, printed);
        REQUIRE_KERNEL_LANGUAGE(m_bed, language);
        const ApiClient client = m_bed.client();
        const qsizetype contextsBefore = client.get(QStringLiteral("/v1/contexts")).array().size();

        const JupyterHarness::Run console =
                m_bed.jupyter().run(JupyterHarness::python(),
                               {QStringLiteral(REPLHOST_CONSOLE_DRIVER), QStringLiteral("replhost-") + language, first, second});
        const QJsonObject transcript = QJsonDocument::fromJson(console.out).object();
        QVERIFY2(console.exitCode == 0 && !transcript.isEmpty(), console.err.constData());
        QVERIFY2(transcript[QStringLiteral("banner")].toString().contains(QStringLiteral(" in replhost context ")),
                 console.out.constData());
        const QJsonArray outputs = transcript[QStringLiteral("outputs")].toArray();
        QCOMPARE(outputs.size(), 2);
        QCOMPARE(outputs[0].toString().trimmed(), firstPrinted);
        QCOMPARE(outputs[1].toString().trimmed(), printed);
        QCOMPARE(transcript[QStringLiteral("status")].toInt(), 0);
        QCOMPARE(client.get(QStringLiteral("/v1/contexts")).array().size(), contextsBefore);
    }

private:
    KernelTestBed m_bed;
};

QTEST_GUILESS_MAIN(tst_JupyterConsole)
#include "tst_jupyterconsole.moc"
