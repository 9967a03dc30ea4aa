// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "wiremessage.h"

#include <QObject>
#include <QString>

#include <array>
#include <memory>

namespace zmq {
class context_t;
class socket_t;
} // namespace zmq

class QSocketNotifier;

namespace replhost::jupyter {

// The five sockets of one kernel connection, driven by the Qt event loop: shell, control and
// stdin are DEALERs, iopub a SUB of everything, heartbeat a REQ that may send again before its
// answer (a lost beat must not wedge it). Received messages are decoded and verified; one with a
// bad signature or a malformed one is dropped and reported with rejected().
//
// ZeroMQ signals readiness through one descriptor per socket, edge-triggered: every socket is
// drained whenever its descriptor fires and after every send, so nothing waits unseen.
//
// A kernel's stdin socket is a ROUTER that drops what it sends to a peer it does not know yet,
// and nothing is ever sent on stdin before the kernel's first input_request: so the stdin socket
// is watched (a ZeroMQ monitor) until its handshake with the kernel is done, stdinConnected().
//
// Threading: lives in the thread that created it; all calls and signals there. ZeroMQ errors
// never escape: they become rejected() or a false return.
class KernelChannels : public QObject {
    Q_OBJECT
public:
    enum Channel { Shell, Control, Stdin, IoPub, Heartbeat };
    Q_ENUM(Channel)

    // `addresses[c]` is the endpoint of channel c ("ipc:///run/...-1", "tcp://127.0.0.1:5555").
    KernelChannels(const WireCodec &codec, const std::array<QString, 5> &addresses,
                   QObject *parent = nullptr);
    ~KernelChannels() override;

    // Connects the sockets; false with the reason when ZeroMQ refuses an address.
    bool open(QString *error);

    // Sends a message on shell, control or stdin. False when ZeroMQ refuses (closed).
    bool send(Channel channel, const WireMessage &message);
    // Sends one ping on the heartbeat socket; its echo comes back as heartbeat().
    void ping();

    // Reads whatever waits on every socket now.
    void drainAll();

    // The stdin socket has completed its handshake with the kernel: an input_request can reach it.
    bool isStdinConnected() const { return m_stdinConnected; }

    const WireCodec &codec() const { return m_codec; }

signals:
    void received(replhost::jupyter::KernelChannels::Channel channel,
                  const replhost::jupyter::WireMessage &message);
    void rejected(replhost::jupyter::KernelChannels::Channel channel, const QString &reason);
    void heartbeat();
    void stdinConnected();

private:
    void drain(Channel channel);
    void drainStdinMonitor();

    WireCodec m_codec;
    std::array<QString, 5> m_addresses;
    std::unique_ptr<zmq::context_t> m_context;
    std::array<std::unique_ptr<zmq::socket_t>, 5> m_sockets;
    std::array<QSocketNotifier *, 5> m_notifiers{};
    std::unique_ptr<zmq::socket_t> m_stdinMonitor;
    QSocketNotifier *m_stdinMonitorNotifier = nullptr;
    bool m_stdinConnected = false;
};

} // namespace replhost::jupyter
