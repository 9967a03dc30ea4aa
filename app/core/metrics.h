// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "contextmanager.h"

#include <QList>
#include <QMap>
#include <QObject>
#include <QPair>
#include <QString>

namespace replhost::core {

class CommandRunner;
class PrometheusWriter;

// The engine's counters, kept from its signals so nothing on the hot path waits for them:
// executions by language and status with a latency histogram and the output they produced,
// worker starts and restarts, commands by status; and, read when asked, the contexts by language
// and state, and the warm pool. write() renders them in the Prometheus text format.
//
// Threading: engine thread only. The context manager and command runner must outlive it.
class Metrics : public QObject {
    Q_OBJECT
public:
    Metrics(ContextManager *contexts, CommandRunner *commands, QObject *parent = nullptr);

    // Upper bounds (seconds) of the execution latency histogram's buckets.
    static QList<double> latencyBounds();

    void write(PrometheusWriter &out) const;

private:
    struct Histogram {
        QList<quint64> counts;  // one per bound, plus one above the last
        double sum = 0;
    };

    void onExecutionFinished(const ExecutionPtr &execution);
    void writeWarmPool(PrometheusWriter &out) const;

    ContextManager *m_contexts;
    QMap<QPair<QString, QString>, quint64> m_executions;  // (language, status)
    QMap<QString, Histogram> m_latency;                   // by language
    QMap<QString, quint64> m_outputBytes;                 // by language
    QMap<QString, quint64> m_workerStarts;                // by language
    QMap<QString, quint64> m_workerRestarts;              // by language
    QMap<QString, quint64> m_commands;                    // by status
    quint64 m_commandOutputBytes = 0;
};

} // namespace replhost::core
