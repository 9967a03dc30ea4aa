// SPDX-License-Identifier: Apache-2.0
// Jupyter's conformance suite (jupyter_kernel_test) passes for replhost-kernel in every language
// with a runtime here; what a language cannot answer is declared in kernelconformance.py, and
// exactly the declared tests are skipped.

#include "kerneltestbed.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

class tst_KernelConformance : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY2(m_bed.start(), qPrintable(m_bed.error())); }
    void cleanupTestCase() { m_bed.stop(); }

    void jupyterKernelTestPasses_data()
    {
        QTest::addColumn<QString>("language");
        for (const char *language : {"python", "javascript", "typescript", "perl", "java", "go", "bash"})
            QTest::newRow(language) << QString::fromLatin1(language);
    }

    void jupyterKernelTestPasses()
    {
        QFETCH(QString, language);
        REQUIRE_KERNEL_LANGUAGE(m_bed, language);

        const JupyterHarness::Run suite =
                m_bed.jupyter().run(JupyterHarness::python(), {QStringLiteral(REPLHOST_KERNEL_CONFORMANCE), language});
        const QJsonObject report = QJsonDocument::fromJson(suite.out).object();
        QVERIFY2(suite.exitCode == 0 && !report.isEmpty(), suite.err.right(6000).constData());
        QVERIFY2(report[QStringLiteral("failures")].toArray().isEmpty(), suite.err.right(6000).constData());
        QCOMPARE(report[QStringLiteral("ran")].toInt(), 12);
        // Skipped are exactly the declared ones, each with its reason.
        const QJsonObject skipped = report[QStringLiteral("skipped")].toObject();
        const QJsonObject declared = report[QStringLiteral("declared")].toObject();
        QCOMPARE(skipped.keys(), declared.keys());
        qInfo("%s", QJsonDocument(skipped).toJson().constData());
    }

private:
    KernelTestBed m_bed;
};

QTEST_GUILESS_MAIN(tst_KernelConformance)
#include "tst_kernelconformance.moc"
