// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "replhost/sdk/session.h"

#include <QByteArray>
#include <QJsonObject>

#include <memory>

class QObject;
class QSocketNotifier;

namespace replhost::sdk {

// Writing to a worker's request pipe (fd 3) after the worker has died raises SIGPIPE, whose
// default action would end the host. Sets it to ignored once per process if it was at its
// default, as Qt does for QProcess and local sockets; the worker is unaffected because its
// dispositions are reset at spawn. A host with a handler of its own keeps it, and writes block
// the signal around them instead.
void ignoreSigpipe();

// The execute request (protocol §3) as a frame body, ASCII JSON. `allowInput` stands for
// request.allowInput, which requests of plugins older than SDK 1.3 do not have.
QByteArray executeFrameBody(const ExecuteRequest &request, bool allowInput);

// The host's end of a worker's request pipe: frames written as they are sent, what the pipe does
// not take at once kept in order and written when it has room again. A write to a worker that
// closed fd 3 (it is dying) is dropped: its exit, seen through its pidfd, is what gets reported.
//
// Threading: the thread of `context`, which also scopes the write notifier's connection.
// Ownership: the channel owns the fd given to open() and closes it in close() or its destructor.
class RequestChannel {
public:
    explicit RequestChannel(QObject *context);
    ~RequestChannel();
    RequestChannel(const RequestChannel &) = delete;
    RequestChannel &operator=(const RequestChannel &) = delete;

    // Takes `fd`, a non-blocking write end.
    void open(int fd);
    bool isOpen() const { return m_fd >= 0; }
    // Writes a frame whose body is `body`, ASCII JSON already. Nothing when not open.
    void send(const QByteArray &body);
    void send(const QJsonObject &message);
    // Drops what is unwritten and closes the fd.
    void close();

private:
    void writeOutgoing();

    QObject *const m_context;
    int m_fd = -1;
    std::unique_ptr<QSocketNotifier> m_notifier;
    QByteArray m_outgoing;  // request bytes the pipe did not take yet
    qsizetype m_outgoingOffset = 0;
};

} // namespace replhost::sdk
