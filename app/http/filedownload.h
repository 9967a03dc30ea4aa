// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "httpresponse.h"

#include "core/workspacefiles.h"

#include <QObject>
#include <QPointer>

#include <memory>

class QTcpSocket;

namespace replhost::http {

class FileWork;
class HttpExchange;

// Sends part of a file as one answer with a Content-Length, a block at a time, reading the next
// block only when the socket has sent most of the last one. A large file therefore costs the
// server a few blocks of memory, not the file's size, however slowly the client reads. Every
// read is made on a FileWork thread, so a slow disk delays this answer only, never the engine
// thread; one read at a time is in flight.
//
// Ownership: deletes itself when the answer is complete or the client goes; keeps the exchange
// and the file's descriptor until then. `work` must outlive it. Threading: the socket's thread.
class FileDownload : public QObject {
    Q_OBJECT
public:
    // Answers a request for `file`: all of it, or the single byte range a `Range` header asks
    // for (206 with Content-Range; 416 when it starts past the end; a malformed or multi-range
    // header is ignored). Small answers are sent in one piece, larger ones streamed.
    static void answer(std::shared_ptr<HttpExchange> exchange, FileWork &work,
                       core::WorkspaceFiles::OpenFile file, const QByteArray &contentType,
                       const QByteArray &rangeHeader);

private:
    FileDownload(std::shared_ptr<HttpExchange> exchange, FileWork &work,
                 core::WorkspaceFiles::OpenFile file, qint64 offset, qint64 remaining);
    ~FileDownload() override;

    void pump();
    void arrived(const Result<QByteArray> &block);
    void stop();

    std::shared_ptr<HttpExchange> m_exchange;
    FileWork &m_work;
    core::WorkspaceFiles::OpenFile m_file;
    QPointer<QTcpSocket> m_socket;
    qint64 m_offset;
    qint64 m_remaining;
    bool m_reading = false;
    bool m_stopped = false;
};

} // namespace replhost::http
