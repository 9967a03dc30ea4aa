// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "httpresponse.h"

#include <QObject>
#include <QPointer>

#include <memory>

class QFile;
class QTcpSocket;

namespace replhost::http {

class HttpExchange;

// Sends part of a file as one answer with a Content-Length, a block at a time, reading the next
// block only when the socket has sent most of the last one. A large file therefore costs the
// server a few blocks of memory, not the file's size, however slowly the client reads.
//
// Ownership: deletes itself when the answer is complete or the client goes; keeps the exchange
// and the file until then. Threading: the socket's thread.
class FileDownload : public QObject {
    Q_OBJECT
public:
    // Answers a request for `file`: all of it, or the single byte range a `Range` header asks
    // for (206 with Content-Range; 416 when it starts past the end; a malformed or multi-range
    // header is ignored). Small answers are sent at once, larger ones streamed with start().
    static void answer(std::shared_ptr<HttpExchange> exchange, std::unique_ptr<QFile> file,
                       const QByteArray &contentType, const QByteArray &rangeHeader);
    // Answers with `status` and `headers`, then the `length` bytes of `file` from `offset`.
    static void start(std::shared_ptr<HttpExchange> exchange, std::unique_ptr<QFile> file,
                      qint64 offset, qint64 length, int status, const HeaderList &headers);

private:
    FileDownload(std::shared_ptr<HttpExchange> exchange, std::unique_ptr<QFile> file,
                 qint64 remaining);
    ~FileDownload() override;

    void pump();
    void stop();

    std::shared_ptr<HttpExchange> m_exchange;
    std::unique_ptr<QFile> m_file;
    QPointer<QTcpSocket> m_socket;
    qint64 m_remaining;
    bool m_stopped = false;
};

} // namespace replhost::http
