// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QDoubleSpinBox>

namespace replhost::gui {

// A spin box for a byte count that reads as people write sizes: "16 MiB", "1.5 GiB", "4096
// bytes". value() stays an exact count of bytes (a double holds every count up to 2^53, beyond
// any limit it edits); typed text may use B, KiB, MiB, GiB or TiB (also KB/MB/GB/TB and k/M/G/T,
// all read as powers of 1024), or no unit for bytes. A size is shown in the largest unit that
// keeps it exact to two decimals, so what is shown is what will be sent. The step is 1 MiB.
// GUI thread only.
class ByteSizeSpinBox : public QDoubleSpinBox {
    Q_OBJECT
public:
    explicit ByteSizeSpinBox(QWidget *parent = nullptr);

    QString textFromValue(double value) const override;
    double valueFromText(const QString &text) const override;
    QValidator::State validate(QString &text, int &pos) const override;

    // The bytes `text` names, or -1 when it names none ("" and partial input included).
    static double parse(const QString &text);
};

} // namespace replhost::gui
