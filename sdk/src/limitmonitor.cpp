// SPDX-License-Identifier: Apache-2.0
#include "limitmonitor.h"

#include <QFile>
#include <QFileInfo>

#include <cerrno>
#include <utility>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

namespace replhost::sdk {

namespace {

int openCounterFile(const QString &path)
{
    int fd;
    do {
        fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

// A cgroup limit file holds a number or "max" (none). 0 for none or unreadable.
qint64 readLimitFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return 0;
    bool ok = false;
    const qint64 n = file.readAll().trimmed().toLongLong(&ok);
    // cgroup v1 writes "no limit" as the largest page-aligned 64-bit value.
    return ok && n > 0 && n < (qint64(1) << 62) ? n : 0;
}

QString bytes(qint64 n)
{
    if (n >= (qint64(1) << 20) && n % (qint64(1) << 20) == 0)
        return QStringLiteral("%1 bytes (%2 MiB)").arg(n).arg(n >> 20);
    return QStringLiteral("%1 bytes").arg(n);
}

} // namespace

LimitMonitor::LimitMonitor(const Confinement &confinement) : m_limits(confinement.limits())
{
    for (const QString &procs : confinement.cgroupProcsFiles()) {
        const QString dir = QFileInfo(procs).path() + QLatin1Char('/');
        // v2 keeps oom_kill in memory.events and the limit in memory.max; v1 in
        // memory.oom_control and memory.limit_in_bytes.
        const std::pair<const char *, const char *> memoryFiles[] = {
                {"memory.events", "memory.max"}, {"memory.oom_control", "memory.limit_in_bytes"}};
        for (const auto &[events, limit] : memoryFiles) {
            Counter counter{openCounterFile(dir + QLatin1String(events)), "oom_kill", 0};
            if (counter.fd < 0)
                continue;
            counter.seen = readCounter(counter);
            m_oomKills.push_back(counter);
            m_memoryLimit = readLimitFile(dir + QLatin1String(limit));
            break;
        }
        Counter pids{openCounterFile(dir + QStringLiteral("pids.events")), "max", 0};
        if (pids.fd >= 0) {
            pids.seen = readCounter(pids);
            m_pidsRefused.push_back(pids);
            m_processLimit = readLimitFile(dir + QStringLiteral("pids.max"));
        }
    }
}

LimitMonitor::~LimitMonitor()
{
    closeAll();
}

LimitMonitor::LimitMonitor(LimitMonitor &&other) noexcept
    : m_limits(other.m_limits),
      m_processLimit(other.m_processLimit),
      m_memoryLimit(other.m_memoryLimit),
      m_oomKills(std::exchange(other.m_oomKills, {})),
      m_pidsRefused(std::exchange(other.m_pidsRefused, {}))
{
}

LimitMonitor &LimitMonitor::operator=(LimitMonitor &&other) noexcept
{
    if (this != &other) {
        closeAll();
        m_limits = other.m_limits;
        m_processLimit = other.m_processLimit;
        m_memoryLimit = other.m_memoryLimit;
        m_oomKills = std::exchange(other.m_oomKills, {});
        m_pidsRefused = std::exchange(other.m_pidsRefused, {});
    }
    return *this;
}

void LimitMonitor::closeAll()
{
    for (auto *list : {&m_oomKills, &m_pidsRefused})
        for (const Counter &c : *list)
            ::close(c.fd);
    m_oomKills.clear();
    m_pidsRefused.clear();
}

qint64 LimitMonitor::readCounter(const Counter &counter)
{
    char buffer[512];
    ssize_t got;
    do {
        got = ::pread(counter.fd, buffer, sizeof buffer - 1, 0);
    } while (got < 0 && errno == EINTR);
    if (got <= 0)
        return 0;
    // Lines of "<key> <count>".
    const QByteArray text(buffer, got);
    for (const QByteArray &line : text.split('\n')) {
        const qsizetype space = line.indexOf(' ');
        if (space > 0 && line.left(space) == counter.key)
            return line.mid(space + 1).trimmed().toLongLong();
    }
    return 0;
}

std::optional<LimitMonitor::Hit> LimitMonitor::explainDeath(int signal)
{
    if (signal == SIGXCPU && m_limits.cpuSeconds > 0)
        return Hit{QStringLiteral("cpu_seconds"), m_limits.cpuSeconds,
                   QStringLiteral("CPU time limit of %1 s reached").arg(m_limits.cpuSeconds)};
    if (signal == SIGXFSZ && m_limits.fileSizeBytes > 0)
        return Hit{QStringLiteral("file_size_bytes"), m_limits.fileSizeBytes,
                   QStringLiteral("file size limit of %1 reached")
                       .arg(bytes(m_limits.fileSizeBytes))};
    if (signal == SIGKILL) {
        bool oomKilled = false;
        for (Counter &c : m_oomKills) {
            const qint64 now = readCounter(c);
            oomKilled = oomKilled || now > c.seen;
            c.seen = now;
        }
        if (oomKilled)
            return Hit{QStringLiteral("memory_bytes"), m_memoryLimit,
                       m_memoryLimit > 0 ? QStringLiteral("memory limit of %1 reached")
                                               .arg(bytes(m_memoryLimit))
                                         : QStringLiteral("memory limit reached")};
    }
    return std::nullopt;
}

qint64 LimitMonitor::takeProcessLimitHits()
{
    qint64 refused = 0;
    for (Counter &c : m_pidsRefused) {
        const qint64 now = readCounter(c);
        refused += std::max<qint64>(0, now - c.seen);
        c.seen = now;
    }
    return refused;
}

QString LimitMonitor::processLimitNote(qint64 refused) const
{
    const QString limit = m_processLimit > 0
                                  ? QStringLiteral("process limit of %1").arg(m_processLimit)
                                  : QStringLiteral("process limit");
    return QStringLiteral("[replhost] %1 reached: %2 process creation(s) refused during this "
                          "run\n")
            .arg(limit)
            .arg(refused);
}

} // namespace replhost::sdk
