// SPDX-License-Identifier: Apache-2.0
#include "bytesizespinbox.h"

#include <QLocale>
#include <QRegularExpression>

#include <cmath>

namespace replhost::gui {

namespace {

struct Unit {
    const char *name;
    double bytes;
};

// Largest first: a value is shown in the first unit that holds it exactly to two decimals.
const Unit kUnits[] = {
    {"TiB", 1099511627776.0}, {"GiB", 1073741824.0}, {"MiB", 1048576.0}, {"KiB", 1024.0},
};

double unitBytes(const QString &unit)
{
    const QString u = unit.toLower();
    if (u.isEmpty() || u == QLatin1String("b") || u == QLatin1String("byte")
        || u == QLatin1String("bytes"))
        return 1;
    const QChar first = u.front();
    const QString rest = u.mid(1);
    if (!rest.isEmpty() && rest != QLatin1String("b") && rest != QLatin1String("ib"))
        return -1;
    switch (first.unicode()) {
    case 'k': return 1024.0;
    case 'm': return 1048576.0;
    case 'g': return 1073741824.0;
    case 't': return 1099511627776.0;
    default: return -1;
    }
}

} // namespace

ByteSizeSpinBox::ByteSizeSpinBox(QWidget *parent)
    : QDoubleSpinBox(parent)
{
    setDecimals(0);
    setSingleStep(1048576.0);
}

QString ByteSizeSpinBox::textFromValue(double value) const
{
    for (const Unit &unit : kUnits) {
        const double scaled = value / unit.bytes;
        if (scaled >= 1 && std::round(scaled * 100) * unit.bytes == value * 100)
            return QStringLiteral("%1 %2").arg(QString::number(scaled, 'g', 15),
                                               QLatin1String(unit.name));
    }
    return QStringLiteral("%1 bytes").arg(QString::number(value, 'f', 0));
}

double ByteSizeSpinBox::parse(const QString &text)
{
    static const QRegularExpression size(
        QStringLiteral(R"(^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$)"));
    const QRegularExpressionMatch match = size.match(text);
    if (!match.hasMatch())
        return -1;
    const double unit = unitBytes(match.captured(2));
    if (unit < 0)
        return -1;
    return std::round(match.captured(1).toDouble() * unit);
}

double ByteSizeSpinBox::valueFromText(const QString &text) const
{
    if (!specialValueText().isEmpty() && text == specialValueText())
        return minimum();
    const double bytes = parse(text);
    return bytes < 0 ? value() : bytes;
}

QValidator::State ByteSizeSpinBox::validate(QString &text, int &pos) const
{
    Q_UNUSED(pos);
    if (!specialValueText().isEmpty() && text == specialValueText())
        return QValidator::Acceptable;
    const double bytes = parse(text);
    if (bytes >= 0)
        return bytes >= minimum() && bytes <= maximum() ? QValidator::Acceptable
                                                        : QValidator::Intermediate;
    // A number still being typed, or a unit half written ("16 M", "1.").
    static const QRegularExpression partial(QStringLiteral(R"(^\s*\d*(?:\.\d*)?\s*[A-Za-z]{0,5}\s*$)"));
    return partial.match(text).hasMatch() ? QValidator::Intermediate : QValidator::Invalid;
}

} // namespace replhost::gui
