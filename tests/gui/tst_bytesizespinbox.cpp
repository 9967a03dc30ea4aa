// SPDX-License-Identifier: Apache-2.0
// ByteSizeSpinBox: sizes shown in the unit people read, typed in any common unit, and the value
// always an exact count of bytes.
#include "gui/bytesizespinbox.h"

#include <QLineEdit>
#include <QTest>

using replhost::gui::ByteSizeSpinBox;

class ByteSizeSpinBoxTest : public QObject {
    Q_OBJECT

private slots:
    void showsTheLargestExactUnit_data()
    {
        QTest::addColumn<double>("bytes");
        QTest::addColumn<QString>("text");
        QTest::newRow("16 MiB") << 16777216.0 << QStringLiteral("16 MiB");
        QTest::newRow("1.5 GiB") << 1610612736.0 << QStringLiteral("1.5 GiB");
        QTest::newRow("1 TiB") << 1099511627776.0 << QStringLiteral("1 TiB");
        QTest::newRow("4 KiB") << 4096.0 << QStringLiteral("4 KiB");
        QTest::newRow("two decimals") << 1310720.0 << QStringLiteral("1.25 MiB");
        QTest::newRow("not exact to two decimals") << 1000000.0 << QStringLiteral("1000000 bytes");
        QTest::newRow("odd bytes") << 1000001.0 << QStringLiteral("1000001 bytes");
        QTest::newRow("below a KiB") << 512.0 << QStringLiteral("512 bytes");
    }
    void showsTheLargestExactUnit()
    {
        QFETCH(double, bytes);
        QFETCH(QString, text);
        ByteSizeSpinBox box;
        box.setRange(0, double(qint64(1) << 50));
        box.setValue(bytes);
        QCOMPARE(box.text(), text);
        QCOMPARE(box.valueFromText(box.text()), bytes);  // what is shown is what is sent
    }

    void readsTypedSizes_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<double>("bytes");
        QTest::newRow("plain number") << QStringLiteral("4096") << 4096.0;
        QTest::newRow("bytes") << QStringLiteral("10 bytes") << 10.0;
        QTest::newRow("MiB") << QStringLiteral("256 MiB") << 268435456.0;
        QTest::newRow("MB as MiB") << QStringLiteral("256MB") << 268435456.0;
        QTest::newRow("G") << QStringLiteral("2 g") << 2147483648.0;
        QTest::newRow("fraction") << QStringLiteral("0.5 KiB") << 512.0;
        QTest::newRow("spaces") << QStringLiteral("  3 kib ") << 3072.0;
    }
    void readsTypedSizes()
    {
        QFETCH(QString, text);
        QFETCH(double, bytes);
        QCOMPARE(ByteSizeSpinBox::parse(text), bytes);
        ByteSizeSpinBox box;
        box.setRange(0, double(qint64(1) << 50));
        box.findChild<QLineEdit *>()->setText(text);
        box.interpretText();
        QCOMPARE(box.value(), bytes);
    }

    void refusesWhatIsNoSize_data()
    {
        QTest::addColumn<QString>("text");
        QTest::newRow("empty") << QString();
        QTest::newRow("unknown unit") << QStringLiteral("5 parsecs");
        QTest::newRow("negative") << QStringLiteral("-5 MiB");
        QTest::newRow("two numbers") << QStringLiteral("5 5");
        QTest::newRow("letters only") << QStringLiteral("MiB");
    }
    void refusesWhatIsNoSize()
    {
        QFETCH(QString, text);
        QCOMPARE(ByteSizeSpinBox::parse(text), -1.0);
        ByteSizeSpinBox box;
        box.setRange(0, 1e12);
        box.setValue(1024);
        int pos = 0;
        QVERIFY(box.validate(text, pos) != QValidator::Acceptable);
        QCOMPARE(box.value(), 1024.0);  // nothing typed that is not a size changes the value
    }

    void zeroShowsTheSpecialText()
    {
        ByteSizeSpinBox box;
        box.setRange(0, 1e12);
        box.setSpecialValueText(QStringLiteral("no limit"));
        box.setValue(0);
        QCOMPARE(box.text(), QStringLiteral("no limit"));
        QCOMPARE(box.valueFromText(QStringLiteral("no limit")), 0.0);
    }
};

QTEST_MAIN(ByteSizeSpinBoxTest)
#include "tst_bytesizespinbox.moc"
