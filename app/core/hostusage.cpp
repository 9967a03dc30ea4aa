// SPDX-License-Identifier: Apache-2.0
#include "hostusage.h"

#include <QFile>
#include <QList>

#include <algorithm>

#include <unistd.h>

namespace replhost::core {

namespace {

Result<QByteArray> readProc(const char *path)
{
    QFile file(QString::fromLatin1(path));
    // /proc files report size 0: read until the end rather than by size.
    if (!file.open(QIODevice::ReadOnly))
        return makeError(QStringLiteral("io"), QStringLiteral("cannot read %1: %2")
                                                       .arg(QString::fromLatin1(path), file.errorString()));
    return file.readAll();
}

// A "Name:   1234 kB" line of /proc/meminfo, in KiB; -1 when absent.
qint64 memInfoKiB(const QByteArray &text, const QByteArray &name)
{
    for (const QByteArray &line : text.split('\n')) {
        if (line.startsWith(name + ':'))
            return line.mid(name.size() + 1).trimmed().split(' ').front().toLongLong();
    }
    return -1;
}

} // namespace

Result<HostUsage::Sample> HostUsage::sample()
{
    Result<QByteArray> stat = readProc("/proc/stat");
    if (!stat)
        return stat.error();
    Result<QByteArray> meminfo = readProc("/proc/meminfo");
    if (!meminfo)
        return meminfo.error();

    // "cpu  user nice system idle iowait irq softirq steal guest guest_nice" (jiffies); guest
    // time is already counted in user and nice.
    const QByteArray firstLine = stat->left(stat->indexOf('\n'));
    QList<QByteArray> fields = firstLine.simplified().split(' ');
    if (fields.size() < 5 || fields.front() != "cpu")
        return makeError(QStringLiteral("io"), QStringLiteral("unexpected /proc/stat format"));
    quint64 total = 0;
    quint64 idle = 0;
    for (qsizetype i = 1; i < fields.size() && i <= 8; ++i) {
        const quint64 value = fields[i].toULongLong();
        total += value;
        if (i == 4 || i == 5)  // idle, iowait
            idle += value;
    }
    const quint64 busy = total - idle;

    Sample sample;
    if (total > m_lastTotal) {
        const double deltaTotal = double(total - m_lastTotal);
        const double deltaBusy = busy >= m_lastBusy ? double(busy - m_lastBusy) : 0.0;
        m_lastPercent = std::clamp(100.0 * deltaBusy / deltaTotal, 0.0, 100.0);
        m_lastBusy = busy;
        m_lastTotal = total;
    }
    sample.cpuUsedPercent = m_lastPercent;
    sample.cpuCount = int(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));

    const qint64 totalKiB = memInfoKiB(*meminfo, "MemTotal");
    qint64 availableKiB = memInfoKiB(*meminfo, "MemAvailable");
    if (totalKiB <= 0)
        return makeError(QStringLiteral("io"), QStringLiteral("unexpected /proc/meminfo format"));
    if (availableKiB < 0)
        availableKiB = std::max<qint64>(0, memInfoKiB(*meminfo, "MemFree"));
    sample.memoryTotalMiB = totalKiB / 1024;
    sample.memoryUsedMiB = std::max<qint64>(0, totalKiB - availableKiB) / 1024;
    return sample;
}

} // namespace replhost::core
