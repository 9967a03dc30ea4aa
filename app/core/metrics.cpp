// SPDX-License-Identifier: Apache-2.0
#include "metrics.h"

#include "commandrunner.h"
#include "prometheuswriter.h"
#include "warmpool.h"

namespace replhost::core {

QList<double> Metrics::latencyBounds()
{
    return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

Metrics::Metrics(ContextManager *contexts, CommandRunner *commands, QObject *parent)
    : QObject(parent), m_contexts(contexts)
{
    connect(contexts, &ContextManager::executionFinished, this, &Metrics::onExecutionFinished);
    connect(contexts, &ContextManager::workerStarted, this,
            [this](const QString &language, bool restart) {
                ++m_workerStarts[language];
                if (restart)
                    ++m_workerRestarts[language];
            });
    connect(commands, &CommandRunner::commandFinished, this, [this](const ExecutionPtr &command) {
        ++m_commands[command->status()];
        m_commandOutputBytes += quint64(command->outputBytes());
    });
}

void Metrics::onExecutionFinished(const ExecutionPtr &execution)
{
    const QString language = execution->language();
    ++m_executions[{language, execution->status()}];
    m_outputBytes[language] += quint64(execution->outputBytes());

    static const QList<double> bounds = latencyBounds();
    Histogram &histogram = m_latency[language];
    if (histogram.counts.isEmpty())
        histogram.counts.fill(0, bounds.size() + 1);
    const double seconds = std::max<qint64>(0, execution->durationMs()) / 1000.0;
    const auto bucket = std::lower_bound(bounds.begin(), bounds.end(), seconds);
    ++histogram.counts[bucket - bounds.begin()];
    histogram.sum += seconds;
}

void Metrics::write(PrometheusWriter &out) const
{
    QMap<QPair<QString, QString>, int> contexts;
    for (const ContextInfo &context : m_contexts->all())
        ++contexts[{context.language, context.state}];
    out.family(QStringLiteral("replhost_contexts"), QStringLiteral("gauge"),
               QStringLiteral("Contexts by language and state."));
    for (auto it = contexts.cbegin(); it != contexts.cend(); ++it)
        out.sample(QStringLiteral("replhost_contexts"),
                   {{QStringLiteral("language"), it.key().first}, {QStringLiteral("state"), it.key().second}},
                   it.value());

    out.family(QStringLiteral("replhost_executions_total"), QStringLiteral("counter"),
               QStringLiteral("Executions that ended, by language and status."));
    for (auto it = m_executions.cbegin(); it != m_executions.cend(); ++it)
        out.sample(QStringLiteral("replhost_executions_total"),
                   {{QStringLiteral("language"), it.key().first}, {QStringLiteral("status"), it.key().second}},
                   double(it.value()));

    out.family(QStringLiteral("replhost_execution_duration_seconds"), QStringLiteral("histogram"),
               QStringLiteral("Time from the start of an execution to its end, by language."));
    for (auto it = m_latency.cbegin(); it != m_latency.cend(); ++it)
        out.histogram(QStringLiteral("replhost_execution_duration_seconds"),
                      {{QStringLiteral("language"), it.key()}}, latencyBounds(), it.value().counts,
                      it.value().sum);

    out.family(QStringLiteral("replhost_execution_output_bytes_total"), QStringLiteral("counter"),
               QStringLiteral("Output kept from executions (stream text and rich data), by language."));
    for (auto it = m_outputBytes.cbegin(); it != m_outputBytes.cend(); ++it)
        out.sample(QStringLiteral("replhost_execution_output_bytes_total"),
                   {{QStringLiteral("language"), it.key()}}, double(it.value()));

    out.family(QStringLiteral("replhost_worker_starts_total"), QStringLiteral("counter"),
               QStringLiteral("Workers started for contexts, by language."));
    for (auto it = m_workerStarts.cbegin(); it != m_workerStarts.cend(); ++it)
        out.sample(QStringLiteral("replhost_worker_starts_total"),
                   {{QStringLiteral("language"), it.key()}}, double(it.value()));

    out.family(QStringLiteral("replhost_worker_restarts_total"), QStringLiteral("counter"),
               QStringLiteral("Workers started for a context that had one before (it died, was "
                              "killed to stop a run, or the context was restarted), by language."));
    for (auto it = m_workerRestarts.cbegin(); it != m_workerRestarts.cend(); ++it)
        out.sample(QStringLiteral("replhost_worker_restarts_total"),
                   {{QStringLiteral("language"), it.key()}}, double(it.value()));

    writeWarmPool(out);

    out.family(QStringLiteral("replhost_commands_total"), QStringLiteral("counter"),
               QStringLiteral("Shell commands that ended, by status."));
    for (auto it = m_commands.cbegin(); it != m_commands.cend(); ++it)
        out.sample(QStringLiteral("replhost_commands_total"), {{QStringLiteral("status"), it.key()}},
                   double(it.value()));
    out.family(QStringLiteral("replhost_command_output_bytes_total"), QStringLiteral("counter"),
               QStringLiteral("Output kept from shell commands."));
    out.sample(QStringLiteral("replhost_command_output_bytes_total"), {}, double(m_commandOutputBytes));
}

void Metrics::writeWarmPool(PrometheusWriter &out) const
{
    const QMap<QString, WarmPool::LanguageState> pool = m_contexts->warmPool().state();
    out.family(QStringLiteral("replhost_warm_pool_workers"), QStringLiteral("gauge"),
               QStringLiteral("Started idle workers waiting in the warm pool, by language and "
                              "state (ready or starting)."));
    for (auto it = pool.cbegin(); it != pool.cend(); ++it) {
        out.sample(QStringLiteral("replhost_warm_pool_workers"),
                   {{QStringLiteral("language"), it.key()}, {QStringLiteral("state"), QStringLiteral("ready")}},
                   it->ready);
        out.sample(QStringLiteral("replhost_warm_pool_workers"),
                   {{QStringLiteral("language"), it.key()}, {QStringLiteral("state"), QStringLiteral("starting")}},
                   it->starting);
    }
    out.family(QStringLiteral("replhost_warm_pool_size"), QStringLiteral("gauge"),
               QStringLiteral("Workers the warm pool keeps per language (0: disabled)."));
    for (auto it = pool.cbegin(); it != pool.cend(); ++it)
        out.sample(QStringLiteral("replhost_warm_pool_size"), {{QStringLiteral("language"), it.key()}},
                   it->size);
    out.family(QStringLiteral("replhost_warm_pool_hits_total"), QStringLiteral("counter"),
               QStringLiteral("Worker starts served by a pooled worker, by language."));
    for (auto it = pool.cbegin(); it != pool.cend(); ++it)
        out.sample(QStringLiteral("replhost_warm_pool_hits_total"),
                   {{QStringLiteral("language"), it.key()}}, double(it->hits));
    out.family(QStringLiteral("replhost_warm_pool_misses_total"), QStringLiteral("counter"),
               QStringLiteral("Worker starts of a pooled language that found no pooled worker that "
                              "fit (none left, other confinement, start-up variables), by "
                              "language."));
    for (auto it = pool.cbegin(); it != pool.cend(); ++it)
        out.sample(QStringLiteral("replhost_warm_pool_misses_total"),
                   {{QStringLiteral("language"), it.key()}}, double(it->misses));
}

} // namespace replhost::core
