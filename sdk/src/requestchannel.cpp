// SPDX-License-Identifier: Apache-2.0
#include "requestchannel.h"

#include "framing.h"

#include <QLoggingCategory>
#include <QObject>
#include <QSocketNotifier>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <mutex>

#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

namespace replhost::sdk {

Q_DECLARE_LOGGING_CATEGORY(lcWorker)

namespace {

// Whether ignoreSigpipe() left SIGPIPE ignored; if not, the host has a handler of its own.
std::atomic<bool> sigpipeIgnored{false};

// writev() to a worker's request pipe. Where the host handles SIGPIPE itself (a crash reporter,
// a test framework), the signal a write to a worker that just died raises must not reach that
// handler: it is blocked around the write and, when raised, taken back before it is unblocked,
// as Qt does for its own pipes. A launcher that refuses its options exits within a millisecond,
// before the init request is written, so this is an ordinary case, not a corner.
ssize_t writeToWorker(int fd, const iovec *parts, int count)
{
    if (sigpipeIgnored.load(std::memory_order_relaxed))
        return ::writev(fd, parts, count);
    sigset_t pipe, previous;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe, &previous);
    const ssize_t written = ::writev(fd, parts, count);
    const int error = errno;
    if (written < 0 && error == EPIPE && !sigismember(&previous, SIGPIPE)) {
        const timespec none{0, 0};
        ::sigtimedwait(&pipe, nullptr, &none); // the write's SIGPIPE is pending on this thread
    }
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    errno = error;
    return written;
}

void appendEnvChange(QByteArray &out, const EnvChange &change)
{
    out.append("{\"set\":{");
    for (auto it = change.set.constBegin(); it != change.set.constEnd(); ++it) {
        if (it != change.set.constBegin())
            out.append(',');
        appendJsonString(out, it.key());
        out.append(':');
        appendJsonString(out, it.value());
    }
    out.append("},\"unset\":[");
    for (qsizetype i = 0; i < change.unset.size(); ++i) {
        if (i > 0)
            out.append(',');
        appendJsonString(out, change.unset[i]);
    }
    out.append("]}");
}

// The request's `env` member, with the comma before it.
void appendEnvDelta(QByteArray &out, const EnvDelta &env)
{
    out.append(",\"env\":{\"context\":");
    appendEnvChange(out, env.context);
    out.append(",\"exec\":");
    appendEnvChange(out, env.exec);
    out.append('}');
}

} // namespace

void ignoreSigpipe()
{
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction current {};
        if (::sigaction(SIGPIPE, nullptr, &current) != 0)
            return;
        if (current.sa_handler == SIG_DFL) {
            struct sigaction ignore {};
            ignore.sa_handler = SIG_IGN;
            sigemptyset(&ignore.sa_mask);
            sigpipeIgnored = ::sigaction(SIGPIPE, &ignore, nullptr) == 0;
        } else {
            sigpipeIgnored = current.sa_handler == SIG_IGN;
        }
    });
}

QByteArray executeFrameBody(const ExecuteRequest &request, bool allowInput)
{
    // Written field by field: one pass, ASCII from the start, instead of a QJsonObject that is
    // serialized and then escaped.
    QByteArray body;
    body.reserve(160 + request.code.size() + request.id.size());
    body.append("{\"type\":\"execute\",\"id\":");
    appendJsonString(body, request.id);
    body.append(",\"code\":");
    appendJsonString(body, request.code);
    body.append(",\"execution_count\":");
    char count[16];
    const char *const countEnd = std::to_chars(count, count + sizeof count,
                                               request.executionCount).ptr;
    body.append(count, countEnd - count);
    if (request.env.context.isEmpty() && request.env.exec.isEmpty()) {
        // The usual run changes no environment: its text, made once, in one append.
        static const QByteArray unchanged = [] {
            QByteArray text;
            appendEnvDelta(text, EnvDelta());
            return text;
        }();
        body.append(unchanged);
    } else {
        appendEnvDelta(body, request.env);
    }
    if (!request.cwd.isEmpty()) {
        body.append(",\"cwd\":");
        appendJsonString(body, request.cwd);
    }
    if (allowInput)
        body.append(",\"input\":true");
    body.append('}');
    return body;
}

RequestChannel::RequestChannel(QObject *context) : m_context(context) {}

RequestChannel::~RequestChannel()
{
    close();
}

void RequestChannel::open(int fd)
{
    close();
    m_fd = fd;
    m_notifier = std::make_unique<QSocketNotifier>(fd, QSocketNotifier::Write);
    m_notifier->setEnabled(false);
    QObject::connect(m_notifier.get(), &QSocketNotifier::activated, m_context,
                     [this] { writeOutgoing(); });
}

void RequestChannel::close()
{
    m_notifier.reset();
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = -1;
    m_outgoing.clear();
    m_outgoingOffset = 0;
}

void RequestChannel::send(const QJsonObject &message)
{
    if (m_fd >= 0)
        send(asciiJson(message));
}

void RequestChannel::send(const QByteArray &body)
{
    if (m_fd < 0)
        return;
    char header[24];
    const int headerSize = writeFrameHeader(header, body.size());
    if (m_outgoingOffset == m_outgoing.size()) {
        // Nothing queued: hand both parts to the kernel at once, without joining them first.
        iovec parts[2] = {{header, size_t(headerSize)},
                          {const_cast<char *>(body.constData()), size_t(body.size())}};
        ssize_t written;
        do {
            written = writeToWorker(m_fd, parts, 2);
        } while (written < 0 && errno == EINTR);
        if (written < 0) {
            if (errno != EAGAIN) {
                // The worker closed fd 3; its exit (seen through the pidfd) will be reported.
                qCDebug(lcWorker) << "request pipe closed:" << std::strerror(errno);
                return;
            }
            written = 0;
        }
        if (written == headerSize + body.size())
            return;
        m_outgoing.clear();
        m_outgoingOffset = 0;
        if (written < headerSize) {
            m_outgoing.append(header + written, headerSize - written);
            m_outgoing.append(body);
        } else {
            m_outgoing.append(body.constData() + (written - headerSize),
                              body.size() - (written - headerSize));
        }
    } else {
        m_outgoing.append(header, headerSize);
        m_outgoing.append(body);
    }
    m_notifier->setEnabled(true);
}

void RequestChannel::writeOutgoing()
{
    while (m_outgoingOffset < m_outgoing.size()) {
        const iovec rest{const_cast<char *>(m_outgoing.constData()) + m_outgoingOffset,
                         size_t(m_outgoing.size() - m_outgoingOffset)};
        const ssize_t written = writeToWorker(m_fd, &rest, 1);
        if (written < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                return;
            qCDebug(lcWorker) << "request pipe closed:" << std::strerror(errno);
            break;
        }
        m_outgoingOffset += written;
    }
    m_outgoing.clear();
    m_outgoingOffset = 0;
    m_notifier->setEnabled(false);
}

} // namespace replhost::sdk
