// SPDX-License-Identifier: Apache-2.0
#include "filedownload.h"

#include "httpexchange.h"

#include <QFile>
#include <QTcpSocket>

namespace replhost::http {

namespace {

constexpr qint64 kBlockBytes = 256 * 1024;
// Unsent bytes allowed in the socket's buffer before reading more of the file.
constexpr qint64 kHighWaterBytes = 1024 * 1024;

} // namespace

void FileDownload::start(std::shared_ptr<HttpExchange> exchange, std::unique_ptr<QFile> file,
                         qint64 offset, qint64 length, int status, const HeaderList &headers)
{
    if (!exchange->beginBody(status, headers, length) || length == 0
        || exchange->request().method == "HEAD") {
        exchange->endStream();
        return;
    }
    if (!file->seek(offset)) {
        // The file shrank since its size was read: nothing honest can follow the headers.
        exchange->endStream();
        return;
    }
    auto *download = new FileDownload(std::move(exchange), std::move(file), length);
    download->pump();
}

FileDownload::FileDownload(std::shared_ptr<HttpExchange> exchange, std::unique_ptr<QFile> file,
                           qint64 remaining)
    : m_exchange(std::move(exchange)), m_file(std::move(file)), m_socket(m_exchange->socket()),
      m_remaining(remaining)
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
    if (m_stopped)
        return;
    if (!m_socket || !m_exchange->isConnected()) {
        stop();
        return;
    }
    while (m_remaining > 0 && m_socket->bytesToWrite() < kHighWaterBytes) {
        const QByteArray block = m_file->read(std::min(kBlockBytes, m_remaining));
        if (block.isEmpty()) {
            // The file was truncated while being sent; the promised length cannot be kept.
            m_socket->abort();
            stop();
            return;
        }
        m_remaining -= block.size();
        if (!m_exchange->writeChunk(block)) {
            stop();
            return;
        }
    }
    if (m_remaining == 0) {
        m_exchange->endStream();
        stop();
    }
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
