// SPDX-License-Identifier: Apache-2.0
#include "filedownload.h"

#include "filework.h"
#include "httpexchange.h"

#include <QRegularExpression>
#include <QTcpSocket>

#include <optional>

namespace replhost::http {

namespace {

// Files up to this size are read and sent in one piece; larger ones are streamed.
constexpr qint64 kInlineBytes = 1024 * 1024;
constexpr qint64 kBlockBytes = 256 * 1024;
// Unsent bytes allowed in the socket's buffer before reading more of the file.
constexpr qint64 kHighWaterBytes = 1024 * 1024;

struct ByteRange {
    qint64 first = 0;
    qint64 length = 0;
};

// A single "bytes=" range of RFC 9110 §14.1.2. No value: serve the whole file (absent, malformed
// or multi-range headers may be ignored). Error "range_not_satisfiable" when it starts past the
// end.
Result<std::optional<ByteRange>> parseRange(const QByteArray &header, qint64 size)
{
    static const QRegularExpression single(QStringLiteral("^\\s*bytes\\s*=\\s*(\\d*)\\s*-\\s*(\\d*)\\s*$"));
    const QRegularExpressionMatch match = single.match(QString::fromLatin1(header));
    if (header.isEmpty() || !match.hasMatch())
        return std::optional<ByteRange>();
    const QString firstText = match.captured(1);
    const QString lastText = match.captured(2);
    if (firstText.isEmpty() && lastText.isEmpty())
        return std::optional<ByteRange>();
    bool ok = true;
    ByteRange range;
    if (firstText.isEmpty()) {
        // "bytes=-n": the last n bytes.
        const qint64 suffix = lastText.toLongLong(&ok);
        if (!ok)
            return std::optional<ByteRange>();
        if (suffix == 0 || size == 0)
            return makeError(QStringLiteral("range_not_satisfiable"),
                             QStringLiteral("the range selects no bytes of a %1-byte file").arg(size));
        range.first = std::max<qint64>(0, size - suffix);
        range.length = size - range.first;
        return std::optional<ByteRange>(range);
    }
    range.first = firstText.toLongLong(&ok);
    if (!ok)
        return std::optional<ByteRange>();
    qint64 last = size - 1;
    if (!lastText.isEmpty()) {
        last = lastText.toLongLong(&ok);
        if (!ok || last < range.first)
            return std::optional<ByteRange>();
        last = std::min(last, size - 1);
    }
    if (range.first >= size)
        return makeError(QStringLiteral("range_not_satisfiable"),
                         QStringLiteral("the range starts at byte %1 of a %2-byte file")
                                 .arg(range.first).arg(size));
    range.length = last - range.first + 1;
    return std::optional<ByteRange>(range);
}

} // namespace

void FileDownload::answer(std::shared_ptr<HttpExchange> exchange, FileWork &work,
                          core::WorkspaceFiles::OpenFile file, const QByteArray &contentType,
                          const QByteArray &rangeHeader)
{
    const qint64 size = file.size;
    HeaderList headers{{"Content-Type", contentType}, {"Accept-Ranges", "bytes"}};
    const Result<std::optional<ByteRange>> range = parseRange(rangeHeader, size);
    if (!range) {
        exchange->addHeader("Content-Range", "bytes */" + QByteArray::number(size));
        exchange->sendError(range.error());
        return;
    }
    int status = 200;
    qint64 first = 0;
    qint64 length = size;
    if (range->has_value()) {
        status = 206;
        first = range->value().first;
        length = range->value().length;
        headers.emplaceBack("Content-Range", "bytes " + QByteArray::number(first) + '-'
                                                     + QByteArray::number(first + length - 1) + '/'
                                                     + QByteArray::number(size));
    }
    if (length <= kInlineBytes) {
        work.run([file, first, length] { return file.read(first, length); },
                 [exchange, status, contentType, headers, length](const Result<QByteArray> &body) {
                     if (!body || body->size() != length) {
                         // Shrunk or unreadable since it was opened: say so rather than lie.
                         exchange->sendError(500, QStringLiteral("io"),
                                             QStringLiteral("the file changed or could not be read "
                                                            "while it was sent"));
                         return;
                     }
                     for (const auto &[name, value] : std::as_const(headers)) {
                         if (name != "Content-Type")
                             exchange->addHeader(name, value);
                     }
                     exchange->send(status, contentType, *body);
                 });
        return;
    }
    if (!exchange->beginBody(status, headers, length) || exchange->request().method == "HEAD") {
        exchange->endStream();
        return;
    }
    auto *download = new FileDownload(std::move(exchange), work, std::move(file), first, length);
    download->pump();
}

FileDownload::FileDownload(std::shared_ptr<HttpExchange> exchange, FileWork &work,
                           core::WorkspaceFiles::OpenFile file, qint64 offset, qint64 remaining)
    : m_exchange(std::move(exchange)), m_work(work), m_file(std::move(file)),
      m_socket(m_exchange->socket()), m_offset(offset), m_remaining(remaining)
{
    if (m_socket) {
        connect(m_socket, &QIODevice::bytesWritten, this, &FileDownload::pump);
        connect(m_socket, &QAbstractSocket::disconnected, this, &FileDownload::stop);
        connect(m_socket, &QObject::destroyed, this, &FileDownload::stop);
    }
}

FileDownload::~FileDownload() = default;

void FileDownload::pump()
{
    if (m_stopped || m_reading)
        return;
    if (!m_socket || !m_exchange->isConnected()) {
        stop();
        return;
    }
    if (m_remaining == 0) {
        m_exchange->endStream();
        stop();
        return;
    }
    if (m_socket->bytesToWrite() >= kHighWaterBytes)
        return;  // bytesWritten() calls again when the client has taken some
    m_reading = true;
    const qint64 length = std::min(kBlockBytes, m_remaining);
    m_work.run([file = m_file, offset = m_offset, length] { return file.read(offset, length); },
               [self = QPointer<FileDownload>(this)](const Result<QByteArray> &block) {
                   if (self)
                       self->arrived(block);
               });
}

void FileDownload::arrived(const Result<QByteArray> &block)
{
    m_reading = false;
    if (m_stopped)
        return;
    if (!block || block->isEmpty()) {
        // The file was truncated while being sent; the promised length cannot be kept.
        if (m_socket)
            m_socket->abort();
        stop();
        return;
    }
    m_offset += block->size();
    m_remaining -= block->size();
    if (!m_exchange->writeChunk(*block)) {
        stop();
        return;
    }
    pump();
}

void FileDownload::stop()
{
    if (m_stopped)
        return;
    m_stopped = true;
    if (m_socket)
        disconnect(m_socket, nullptr, this, nullptr);
    deleteLater();
}

} // namespace replhost::http
