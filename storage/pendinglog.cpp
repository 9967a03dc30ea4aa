// SPDX-License-Identifier: Apache-2.0
#include "pendinglog.h"

#include <QCryptographicHash>
#include <QFile>
#include <QtEndian>

#include <cerrno>
#include <cstring>
#include <utility>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

namespace replhost::storage {

namespace {

// A record: magic, payload length (u32), seq (u64), MD5 of the length, seq and payload, payload.
// Little-endian. The checksum only tells a damaged or cut record from a whole one.
constexpr char kMagic[4] = {'R', 'H', 'P', 'L'};
constexpr qsizetype kDigestSize = 16;
constexpr qsizetype kHeaderSize = 4 + 4 + 8 + kDigestSize;
// A batch of history writes is bounded by HistoryWriter's queue (16 MiB); anything claiming more
// is damage, not a record.
constexpr quint32 kMaxPayload = 64 * 1024 * 1024;

Error logError(const QString &what, const QString &path, int error)
{
    return makeError(QStringLiteral("storage"), QStringLiteral("%1 %2: %3")
                                                    .arg(what, path, QString::fromLocal8Bit(std::strerror(error))));
}

QByteArray digest(const char *lengthAndSeq, QByteArrayView payload)
{
    QCryptographicHash hash(QCryptographicHash::Md5);
    hash.addData(QByteArrayView(lengthAndSeq, 12));
    hash.addData(payload);
    return hash.result();
}

} // namespace

PendingLog::PendingLog(QString path, int fd) : m_path(std::move(path)), m_fd(fd) {}

PendingLog::PendingLog(PendingLog &&other) noexcept
    : m_path(std::move(other.m_path)), m_fd(std::exchange(other.m_fd, -1))
{
}

PendingLog &PendingLog::operator=(PendingLog &&other) noexcept
{
    if (this != &other) {
        if (m_fd >= 0)
            ::close(m_fd);
        m_path = std::move(other.m_path);
        m_fd = std::exchange(other.m_fd, -1);
    }
    return *this;
}

PendingLog::~PendingLog()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

Result<PendingLog> PendingLog::open(const QString &path)
{
    const int fd = ::open(QFile::encodeName(path).constData(),
                          O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        return logError(QStringLiteral("cannot open"), path, errno);
    return PendingLog(path, fd);
}

Result<std::vector<PendingLog::Record>> PendingLog::read() const
{
    QFile file(m_path);
    if (!file.open(QIODevice::ReadOnly))
        return makeError(QStringLiteral("storage"),
                         QStringLiteral("cannot read %1: %2").arg(m_path, file.errorString()));
    const QByteArray bytes = file.readAll();
    std::vector<Record> records;
    qsizetype at = 0;
    while (bytes.size() - at >= kHeaderSize) {
        const char *header = bytes.constData() + at;
        if (std::memcmp(header, kMagic, sizeof kMagic) != 0)
            break;
        const quint32 length = qFromLittleEndian<quint32>(header + 4);
        if (length > kMaxPayload || bytes.size() - at - kHeaderSize < qsizetype(length))
            break;  // cut short by a crash during append(), or damaged
        const QByteArrayView payload(header + kHeaderSize, length);
        if (digest(header + 4, payload) != QByteArrayView(header + 16, kDigestSize))
            break;
        records.push_back(Record{qFromLittleEndian<quint64>(header + 8), payload.toByteArray()});
        at += kHeaderSize + length;
    }
    return records;
}

Result<void> PendingLog::append(quint64 seq, const QByteArray &payload)
{
    if (quint64(payload.size()) > kMaxPayload)
        return makeError(QStringLiteral("storage"),
                         QStringLiteral("a record of %1 bytes is beyond the pending log's bound")
                             .arg(payload.size()));
    char header[kHeaderSize];
    std::memcpy(header, kMagic, sizeof kMagic);
    qToLittleEndian<quint32>(quint32(payload.size()), header + 4);
    qToLittleEndian<quint64>(seq, header + 8);
    const QByteArray sum = digest(header + 4, payload);
    std::memcpy(header + 16, sum.constData(), kDigestSize);

    // Header and payload in one writev(2), without copying them into one buffer first: this is
    // on the engine thread, once per run.
    iovec parts[2] = {{header, size_t(kHeaderSize)},
                      {const_cast<char *>(payload.constData()), size_t(payload.size())}};
    iovec *part = parts;
    int count = payload.isEmpty() ? 1 : 2;
    while (count > 0) {
        const ssize_t n = ::writev(m_fd, part, count);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return logError(QStringLiteral("cannot append to"), m_path, errno);
        }
        // Taken in part (a full disk, a signal): go on from where it stopped.
        size_t left = size_t(n);
        while (count > 0 && left >= part->iov_len) {
            left -= part->iov_len;
            ++part;
            --count;
        }
        if (count > 0) {
            part->iov_base = static_cast<char *>(part->iov_base) + left;
            part->iov_len -= left;
        }
    }
    return {};
}

Result<void> PendingLog::clear()
{
    if (::ftruncate(m_fd, 0) != 0)
        return logError(QStringLiteral("cannot empty"), m_path, errno);
    return {};
}

} // namespace replhost::storage
