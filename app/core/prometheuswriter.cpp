// SPDX-License-Identifier: Apache-2.0
#include "prometheuswriter.h"

#include <cmath>

namespace replhost::core {

namespace {

QByteArray number(double value)
{
    if (std::isinf(value))
        return value > 0 ? "+Inf" : "-Inf";
    if (std::isnan(value))
        return "NaN";
    if (value == std::floor(value) && std::fabs(value) < 1e15)
        return QByteArray::number(qint64(value));
    return QByteArray::number(value, 'g', 10);
}

QByteArray labelText(const PrometheusWriter::Labels &labels)
{
    if (labels.isEmpty())
        return {};
    QByteArray text = "{";
    for (qsizetype i = 0; i < labels.size(); ++i) {
        if (i > 0)
            text += ',';
        text += labels[i].first.toUtf8() + "=\"" + PrometheusWriter::escape(labels[i].second).toUtf8() + '"';
    }
    return text + '}';
}

} // namespace

QString PrometheusWriter::escape(const QString &value)
{
    QString escaped = value;
    escaped.replace(QLatin1Char('\\'), QLatin1String("\\\\"));
    escaped.replace(QLatin1Char('"'), QLatin1String("\\\""));
    escaped.replace(QLatin1Char('\n'), QLatin1String("\\n"));
    return escaped;
}

void PrometheusWriter::family(const QString &name, const QString &type, const QString &help)
{
    QString helpText = help;
    helpText.replace(QLatin1Char('\\'), QLatin1String("\\\\"));
    helpText.replace(QLatin1Char('\n'), QLatin1String("\\n"));
    m_text += "# HELP " + name.toUtf8() + ' ' + helpText.toUtf8() + '\n';
    m_text += "# TYPE " + name.toUtf8() + ' ' + type.toUtf8() + '\n';
}

void PrometheusWriter::sample(const QString &name, const Labels &labels, double value)
{
    m_text += name.toUtf8() + labelText(labels) + ' ' + number(value) + '\n';
}

void PrometheusWriter::histogram(const QString &name, const Labels &labels,
                                 const QList<double> &bounds, const QList<quint64> &counts,
                                 double sum)
{
    quint64 cumulative = 0;
    for (qsizetype i = 0; i <= bounds.size(); ++i) {
        cumulative += i < counts.size() ? counts[i] : 0;
        Labels withBound = labels;
        withBound.append({QStringLiteral("le"),
                          i < bounds.size() ? QString::fromLatin1(number(bounds[i]))
                                            : QStringLiteral("+Inf")});
        sample(name + QStringLiteral("_bucket"), withBound, double(cumulative));
    }
    sample(name + QStringLiteral("_sum"), labels, sum);
    sample(name + QStringLiteral("_count"), labels, double(cumulative));
}

} // namespace replhost::core
