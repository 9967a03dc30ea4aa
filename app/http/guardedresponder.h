// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "httpresponse.h"

#include <QByteArray>
#include <QHttpServerResponder>
#include <QPointer>
#include <QTcpSocket>

#include <optional>

namespace replhost::http {

// Qt HttpServer's responder, made safe to keep past the moment its client leaves. Qt 6.4's
// QHttpServerResponder writes through a raw QTcpSocket pointer and only asserts that the socket
// is open, so an answer that comes later (an execution that ends, the next event of a stream)
// would write to a deleted socket. This one checks a QPointer to the socket, and its state,
// before every write, and reports a client that is gone instead of writing.
//
// Ownership: owns the Qt responder (move-only); the socket is not its own.
// Threading: the socket's thread only.
class GuardedResponder {
public:
    GuardedResponder() = default;
    GuardedResponder(QHttpServerResponder &&responder, QTcpSocket *socket);

    // The socket is still there and connected.
    bool isConnected() const;
    QTcpSocket *socket() const { return m_socket; }

    // Each returns false (and writes nothing) when the client is gone.
    bool writeStatusLine(int status);
    // The fields of `first` and then `second`, as Qt's writeHeader() would write them, in one
    // socket write: Qt 6.4's writeHeader() makes four of every field (name, ": ", value, CRLF),
    // each a pass through QIODevice and QAbstractSocket, and its list overload takes only an
    // initializer_list, not fields known at run time.
    bool writeHeaders(const HeaderList &first, const HeaderList &second);
    // The first call ends the head (the blank line) before the bytes.
    bool writeBody(const QByteArray &bytes);
    // Bytes after the body has started (chunk frames, stream events), as they are.
    bool writeRaw(const QByteArray &bytes);
    // Hands what was written to the kernel now instead of at the event loop's next pass.
    void flush();

private:
    std::optional<QHttpServerResponder> m_responder;
    QPointer<QTcpSocket> m_socket;
};

} // namespace replhost::http
