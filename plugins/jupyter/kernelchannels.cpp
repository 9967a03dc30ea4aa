// SPDX-License-Identifier: Apache-2.0
#include "kernelchannels.h"

#include <QPointer>
#include <QSocketNotifier>
#include <QTimer>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include <cstdint>
#include <cstring>
#include <iterator>
#include <vector>

namespace replhost::jupyter {

KernelChannels::KernelChannels(const WireCodec &codec, const std::array<QString, 5> &addresses,
                               QObject *parent)
    : QObject(parent), m_codec(codec), m_addresses(addresses)
{
}

namespace {

const char kStdinMonitor[] = "inproc://stdin-monitor";

} // namespace

KernelChannels::~KernelChannels()
{
    delete m_stdinMonitorNotifier;
    m_stdinMonitor.reset();
    for (QSocketNotifier *notifier : m_notifiers)
        delete notifier;
    for (auto &socket : m_sockets)
        socket.reset();  // linger 0: nothing waits for a kernel that is gone
    m_context.reset();
}

bool KernelChannels::open(QString *error)
{
    try {
        m_context = std::make_unique<zmq::context_t>(1);
        const zmq::socket_type types[] = {zmq::socket_type::dealer, zmq::socket_type::dealer,
                                          zmq::socket_type::dealer, zmq::socket_type::sub,
                                          zmq::socket_type::req};
        // One identity for shell and stdin, as Jupyter's clients use: a kernel sends an
        // input_request to the stdin socket whose identity sent the execute_request.
        const std::string identity = m_codec.session().toStdString();
        for (int c = Shell; c <= Heartbeat; ++c) {
            auto socket = std::make_unique<zmq::socket_t>(*m_context, types[c]);
            socket->set(zmq::sockopt::linger, 0);
            if (c == Shell || c == Stdin)
                socket->set(zmq::sockopt::routing_id, identity);
            if (c == IoPub)
                socket->set(zmq::sockopt::subscribe, "");
            if (c == Heartbeat) {
                socket->set(zmq::sockopt::req_relaxed, 1);
                socket->set(zmq::sockopt::req_correlate, 1);
            }
            if (c == Stdin) {
                if (zmq_socket_monitor(socket->handle(), kStdinMonitor, ZMQ_EVENT_HANDSHAKE_SUCCEEDED) != 0)
                    throw zmq::error_t();
                m_stdinMonitor = std::make_unique<zmq::socket_t>(*m_context, zmq::socket_type::pair);
                m_stdinMonitor->set(zmq::sockopt::linger, 0);
                m_stdinMonitor->connect(kStdinMonitor);
                m_stdinMonitorNotifier = new QSocketNotifier(
                    qintptr(m_stdinMonitor->get(zmq::sockopt::fd)), QSocketNotifier::Read);
                connect(m_stdinMonitorNotifier, &QSocketNotifier::activated, this,
                        &KernelChannels::drainStdinMonitor);
            }
            socket->connect(m_addresses[c].toStdString());
            auto *notifier = new QSocketNotifier(qintptr(socket->get(zmq::sockopt::fd)),
                                                 QSocketNotifier::Read);
            connect(notifier, &QSocketNotifier::activated, this,
                    [this, channel = Channel(c)] { drain(channel); });
            m_sockets[c] = std::move(socket);
            m_notifiers[c] = notifier;
        }
    } catch (const zmq::error_t &e) {
        if (error)
            *error = QString::fromUtf8(e.what());
        return false;
    }
    QTimer::singleShot(0, this, &KernelChannels::drainStdinMonitor);
    return true;
}

bool KernelChannels::send(Channel channel, const WireMessage &message)
{
    zmq::socket_t *socket = m_sockets[channel].get();
    if (!socket)
        return false;
    try {
        std::vector<zmq::message_t> frames;
        for (const QByteArray &frame : m_codec.encode(message))
            frames.emplace_back(frame.constData(), size_t(frame.size()));
        zmq::send_multipart(*socket, frames);
    } catch (const zmq::error_t &) {
        return false;
    }
    // Sending may have consumed the edge that announced waiting input.
    QTimer::singleShot(0, this, [this, channel] { drain(channel); });
    return true;
}

void KernelChannels::ping()
{
    zmq::socket_t *socket = m_sockets[Heartbeat].get();
    if (!socket)
        return;
    try {
        (void)socket->send(zmq::buffer("ping", 4), zmq::send_flags::dontwait);
    } catch (const zmq::error_t &) {
        return;
    }
    QTimer::singleShot(0, this, [this] { drain(Heartbeat); });
}

void KernelChannels::drainStdinMonitor()
{
    if (!m_stdinMonitor)
        return;
    bool connected = false;
    try {
        while (m_stdinMonitor->get(zmq::sockopt::events) & ZMQ_POLLIN) {
            // Two frames: the event (16 bits) and its value (32 bits), then the endpoint.
            std::vector<zmq::message_t> frames;
            if (!zmq::recv_multipart(*m_stdinMonitor, std::back_inserter(frames),
                                     zmq::recv_flags::dontwait))
                break;
            std::uint16_t event = 0;
            if (!frames.empty() && frames.front().size() >= sizeof event)
                std::memcpy(&event, frames.front().data(), sizeof event);
            connected = connected || event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED;
        }
    } catch (const zmq::error_t &) {
    }
    if (connected && !m_stdinConnected) {
        m_stdinConnected = true;
        emit stdinConnected();
    }
}

void KernelChannels::drainAll()
{
    const QPointer<KernelChannels> self(this);
    for (int c = Shell; c <= Heartbeat && self; ++c)
        drain(Channel(c));
}

void KernelChannels::drain(Channel channel)
{
    zmq::socket_t *socket = m_sockets[channel].get();
    if (!socket)
        return;
    try {
        while (socket->get(zmq::sockopt::events) & ZMQ_POLLIN) {
            std::vector<zmq::message_t> frames;
            if (!zmq::recv_multipart(*socket, std::back_inserter(frames),
                                     zmq::recv_flags::dontwait))
                break;
            if (channel == Heartbeat) {
                const QPointer<KernelChannels> self(this);
                emit heartbeat();
                if (!self)
                    return;
                continue;
            }
            QList<QByteArray> parts;
            for (const zmq::message_t &frame : frames)
                parts.append(QByteArray(frame.data<char>(), qsizetype(frame.size())));
            Result<WireMessage> message = m_codec.decode(parts);
            if (!message) {
                const QPointer<KernelChannels> self(this);
                emit rejected(channel, message.error().message);
                if (!self)
                    return;
                continue;
            }
            const QPointer<KernelChannels> self(this);
            emit received(channel, *message);
            if (!self)
                return;  // a slot ended the connection
        }
    } catch (const zmq::error_t &) {
    }
}

} // namespace replhost::jupyter
