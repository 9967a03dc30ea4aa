// SPDX-License-Identifier: Apache-2.0
#include "interruptwatcher.h"

#include <cerrno>

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

namespace replhost::cli {

namespace {

constexpr char kInterrupt = 'i';
constexpr char kStop = 'q';

// The handler's only state; valid while an InterruptWatcher is set up.
volatile sig_atomic_t g_writeFd = -1;

void onSigint(int)
{
    const int saved = errno;
    const char byte = kInterrupt;
    [[maybe_unused]] const ssize_t written = ::write(g_writeFd, &byte, 1);
    errno = saved;
}

} // namespace

InterruptWatcher::InterruptWatcher(std::function<void(int count)> onInterrupt)
    : m_onInterrupt(std::move(onInterrupt))
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return;
    m_readFd = fds[0];
    m_writeFd = fds[1];
    // The handler must never block, whatever happens to the reader.
    ::fcntl(m_writeFd, F_SETFL, O_NONBLOCK);
    g_writeFd = m_writeFd;

    struct sigaction action {};
    action.sa_handler = onSigint;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (::sigaction(SIGINT, &action, &m_previous) != 0) {
        g_writeFd = -1;
        return;
    }
    m_thread = std::thread([this] { watch(); });
    // Only the watcher's thread takes SIGINT, so the creator's blocking reads are never cut
    // short by EINTR (socket reads with a timeout are not restarted by SA_RESTART).
    sigset_t interrupt;
    sigemptyset(&interrupt);
    sigaddset(&interrupt, SIGINT);
    ::pthread_sigmask(SIG_BLOCK, &interrupt, &m_previousMask);
}

InterruptWatcher::~InterruptWatcher()
{
    if (m_thread.joinable()) {
        ::sigaction(SIGINT, &m_previous, nullptr);
        const char byte = kStop;
        while (::write(m_writeFd, &byte, 1) < 0 && errno == EINTR) {
        }
        m_thread.join();
        ::pthread_sigmask(SIG_SETMASK, &m_previousMask, nullptr);
    }
    g_writeFd = -1;
    if (m_readFd >= 0)
        ::close(m_readFd);
    if (m_writeFd >= 0)
        ::close(m_writeFd);
}

void InterruptWatcher::watch()
{
    int count = 0;
    for (;;) {
        char byte = 0;
        const ssize_t n = ::read(m_readFd, &byte, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || byte == kStop)
            return;
        m_onInterrupt(++count);
    }
}

} // namespace replhost::cli
