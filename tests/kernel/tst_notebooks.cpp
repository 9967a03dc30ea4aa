// SPDX-License-Identifier: Apache-2.0
// Committed notebooks, one per language, executed by `jupyter nbconvert --to notebook --execute`
// (Debian's jupyter-nbconvert) with replhost's kernelspecs: each cell uses what the one before
// defined, and the executed notebook holds the outputs.

#include "kerneltestbed.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

namespace {

// nbformat keeps text as a string or as a list of lines.
QString multiline(const QJsonValue &value)
{
    if (!value.isArray())
        return value.toString();
    QString text;
    for (const QJsonValue &line : value.toArray())
        text += line.toString();
    return text;
}

} // namespace

class tst_Notebooks : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY2(m_bed.start(), qPrintable(m_bed.error())); }
    void cleanupTestCase() { m_bed.stop(); }

    void executedNotebookHasTheOutputs_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("answerType");  // how the second cell shows 42
        QTest::addColumn<QString>("answer");
        QTest::newRow("python") << "python" << "execute_result" << "42";
        QTest::newRow("javascript") << "javascript" << "execute_result" << "42";
        QTest::newRow("typescript") << "typescript" << "execute_result" << "42";
        QTest::newRow("perl") << "perl" << "execute_result" << "42";
        QTest::newRow("java") << "java" << "execute_result" << "42";
        QTest::newRow("go") << "go" << "execute_result" << "42";
        // A Bash cell has no value: it prints.
        QTest::newRow("bash") << "bash" << "stream" << "42\n";
    }

    void executedNotebookHasTheOutputs()
    {
        QFETCH(QString, language);
        QFETCH(QString, answerType);
        QFETCH(QString, answer);
        REQUIRE_KERNEL_LANGUAGE(m_bed, language);

        const QString source = QStringLiteral(REPLHOST_NOTEBOOK_DIR "/") + language + QStringLiteral(".ipynb");
        const QString out = m_bed.jupyter().home() + QStringLiteral("/executed");
        const JupyterHarness::Run converted = m_bed.jupyter().run(
                QStringLiteral("jupyter"),
                {QStringLiteral("nbconvert"), QStringLiteral("--to"), QStringLiteral("notebook"), QStringLiteral("--execute"),
                 source, QStringLiteral("--output-dir"), out, QStringLiteral("--output"), language});
        QVERIFY2(converted.exitCode == 0, converted.err.constData());

        QFile executed(out + QStringLiteral("/") + language + QStringLiteral(".ipynb"));
        QVERIFY(executed.open(QIODevice::ReadOnly));
        const QJsonArray cells = QJsonDocument::fromJson(executed.readAll()).object()[QStringLiteral("cells")].toArray();
        QCOMPARE(cells.size(), 4);

        const QJsonArray greeting = cells[1][QStringLiteral("outputs")].toArray();
        QCOMPARE(greeting.size(), 1);
        QCOMPARE(greeting[0][QStringLiteral("output_type")].toString(), QStringLiteral("stream"));
        QCOMPARE(greeting[0][QStringLiteral("name")].toString(), QStringLiteral("stdout"));
        QCOMPARE(multiline(greeting[0][QStringLiteral("text")]), QStringLiteral("hello, world\n"));

        const QJsonArray sum = cells[2][QStringLiteral("outputs")].toArray();
        QCOMPARE(sum.size(), 1);
        QCOMPARE(sum[0][QStringLiteral("output_type")].toString(), answerType);
        const QString shown = answerType == QLatin1String("stream")
                ? multiline(sum[0][QStringLiteral("text")])
                : multiline(sum[0][QStringLiteral("data")][QStringLiteral("text/plain")]);
        QCOMPARE(shown, answer);

        const QJsonArray display = cells[3][QStringLiteral("outputs")].toArray();
        QCOMPARE(display.size(), 1);
        QCOMPARE(display[0][QStringLiteral("output_type")].toString(), QStringLiteral("display_data"));
        QCOMPARE(multiline(display[0][QStringLiteral("data")][QStringLiteral("text/html")]).trimmed(),
                 QStringLiteral("<b>hello, world</b>"));

        // The cells ran one after another in one context.
        for (int i = 1; i <= 3; ++i)
            QCOMPARE(cells[i][QStringLiteral("execution_count")].toInt(), i);
    }

private:
    KernelTestBed m_bed;
};

QTEST_GUILESS_MAIN(tst_Notebooks)
#include "tst_notebooks.moc"
