// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>

namespace replhost::core {

// Writes the Prometheus text exposition format (version 0.0.4): for each metric family a
// "# HELP" and a "# TYPE" line, then its samples, "name{label="value",…} number". Label values
// are escaped (backslash, quote, newline) so any value is safe.
//
// Threading: a value; one writer per scrape.
class PrometheusWriter {
public:
    using Labels = QList<QPair<QString, QString>>;

    static QByteArray contentType() { return "text/plain; version=0.0.4; charset=utf-8"; }

    // Starts a family: `type` is "counter", "gauge" or "histogram".
    void family(const QString &name, const QString &type, const QString &help);
    void sample(const QString &name, const Labels &labels, double value);
    // A histogram's samples: cumulative `_bucket` counts for each upper bound (and +Inf), `_sum`
    // and `_count`. `counts[i]` is the number of observations <= bounds[i] (not cumulative);
    // `counts` has one more entry than `bounds`, for the observations above the last bound.
    void histogram(const QString &name, const Labels &labels, const QList<double> &bounds,
                   const QList<quint64> &counts, double sum);

    QByteArray text() const { return m_text; }

    static QString escape(const QString &value);

private:
    QByteArray m_text;
};

} // namespace replhost::core
