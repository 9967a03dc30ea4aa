// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "connectionlimits.h"
#include "headcheck.h"

#include <QElapsedTimer>
#include <QHostAddress>
#include <QObject>
#include <QPointer>
#include <QTcpSocket>
#include <QTimer>

#include <functional>
#include <optional>

namespace replhost::http {

class GuardedTcpServer;

// What one HTTP/1.x connection goes through before and between the requests Qt HttpServer
// parses. Qt 6.4's QAbstractHttpServer reads whatever a socket brings: it buffers any body in
// full before anything can look at its head, sends no "100 Continue", has no deadline, no rate
// and no idle limit, and parses a pipelined request while the previous answer is still being
// produced. So the guard sees every request head first, and Qt gets the socket only for a
// request the guard has let in:
//
// - Its readyRead slot is connected before Qt's, so it runs first. Between requests it peeks at
//   the buffered bytes until a head is complete (HeadCheck: framing, sizes), asks the server's
//   admission (SecurityGate: Host, Origin, token) and only then lets Qt read. A refused request
//   is answered from its head (400, 401, 403, 413, 431...) before any of its body is read: a
//   refused request without a body keeps the connection; one with a body closes it gracefully
//   (the answer is sent, then what the client still sends is discarded until it closes or the
//   linger time is over, so it reads the answer instead of a reset).
// - "100 Continue" is sent by the guard, after admission.
// - Qt gets the socket (GuardedTcpServer::handOver) for the first admitted request. When bytes
//   arrive that the guard has not admitted (a head that has not ended, or a request pipelined
//   while an answer is pending) it takes the socket back from Qt (disconnecting Qt's readyRead
//   slot) and hands it over again once it admits the next request. So the next pipelined request
//   is parsed only when the answers before it are complete, which keeps answers in order.
// - Deadlines: a head must be complete within headTimeoutMs of its first byte (→ 408); a body
//   must keep an average of minBodyBytesPerSecond after that time (→ 408); a connection idle
//   since its last answer is closed after idleTimeoutMs, and bytes of an unfinished head do not
//   restart that clock. While an answer is being produced nothing times out (streams are long).
// - A chunked body is counted as it arrives (framing included, with 1/16 allowance for it) and
//   refused with 413 past the body limit; Qt 6.4 would buffer it without limit.
//
// Ownership: a child of its socket, so it goes when the socket is deleted (on disconnect).
// Threading: the socket's thread only.
class ConnectionGuard : public QObject {
    Q_OBJECT
public:
    // Decides from a complete, well-framed head whether the request may be read: nothing when it
    // may, otherwise the refusal to answer (with its extra header fields).
    using Admission = std::function<std::optional<HeadRefusal>(const RequestHead &head,
                                                               const QHostAddress &peer)>;

    // `server` hands the socket to Qt HttpServer; it and `admission` outlive the socket.
    ConnectionGuard(QTcpSocket *socket, const ConnectionLimits &limits, Admission admission,
                    GuardedTcpServer *server);
    ~ConnectionGuard() override;

    // The guard of a socket the server accepted; null for any other socket.
    static ConnectionGuard *of(QTcpSocket *socket);

    QTcpSocket *socket() const { return m_socket; }

    // Qt HttpServer has parsed the request the guard admitted last; its answer is being
    // produced. Returns the head as the check read it. False from isReading() otherwise: a
    // request the guard did not admit must not be answered.
    bool isReading() const { return m_phase == Phase::QtReading; }
    const RequestHead &beginAnswer();

    // The current answer is completely written (queued on the socket). `close`: the client asked
    // for it or the answer was framed by closing, so the connection closes once it is sent.
    void endResponse(bool close);

    // The connection is going away: no more answers may be started on it.
    bool isClosing() const { return m_phase == Phase::Closing; }

    // Ends the connection at once, e.g. when an answer can no longer be completed.
    void abortConnection();

    // Answers `refusal` and closes the connection gracefully. Only while no answer is being
    // written on it (the 503 of a connection over the caps, a deadline, a body too large).
    void refuse(const HeadRefusal &refusal);

private:
    enum class Phase { WaitingForHead, QtReading, Answering, Closing };

    void onReadyRead();
    void inspect();
    void admit(const RequestHead &head, bool inReadyRead);
    void writeRefusal(const HeadRefusal &refusal, bool close);
    void takeBackFromQt();
    void enterWaiting();
    void countBodyBytes(qint64 bytes);
    void onTimer();
    void closeLingering();
    void halfCloseWhenWritten();

    QPointer<QTcpSocket> m_socket;
    const ConnectionLimits m_limits;
    const Admission m_admission;
    QPointer<GuardedTcpServer> m_server;
    Phase m_phase = Phase::WaitingForHead;
    RequestHead m_current;         // the head admitted last
    bool m_qtConnected = false;    // Qt HttpServer's readyRead slot is connected
    int m_handovers = 0;
    bool m_headStarted = false;    // bytes of a head that has not ended are buffered
    bool m_inReadyRead = false;
    qint64 m_bodyBytes = 0;        // body bytes seen arriving for the admitted request
    QElapsedTimer m_bodyClock;
    QElapsedTimer m_lastWrite;     // since bytes of an answer were last taken by the kernel
    QTimer m_timer;                // the deadline of the phase
    bool m_lingering = false;
    bool m_halfClosed = false;
    QTimer m_lingerTimer;
};

} // namespace replhost::http
