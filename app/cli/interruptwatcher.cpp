// SPDX-License-Identifier: Apache-2.0
#include "interruptwatcher.h"

#include <cerrno>

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

namespace replhost::cli {

namespace {

// One SIGINT as the handler saw it arrive, or the destructor's request to stop. Written in one
// write(), smaller than PIPE_BUF, so each is read whole.
struct Record {
    bool stop = false;
    bool sentByKill = false;   // si_code SI_USER: kill() or raise(), not the terminal
    pid_t sender = 0;          // si_pid, for sentByKill
};

// The handler's state; valid while an InterruptWatcher is set up.
volatile sig_atomic_t g_writeFd = -1;

void onSigint(int, siginfo_t *info, void *)
{
    const int saved = errno;
    Record record;
    record.sentByKill = info && info->si_code == SI_USER;
    record.sender = record.sentByKill ? info->si_pid : 0;
    [[maybe_unused]] const ssize_t written = ::write(g_writeFd, &record, sizeof record);
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
    action.sa_sigaction = onSigint;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART | SA_SIGINFO;
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
        Record stop;
        stop.stop = true;
        while (::write(m_writeFd, &stop, sizeof stop) < 0 && errno == EINTR) {
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
    pid_t lastSender = 0;  // of the last counted SIGINT, when kill() sent it
    for (;;) {
        Record record;
        const ssize_t n = ::read(m_readFd, &record, sizeof record);
        if (n < 0 && errno == EINTR)
            continue;
        if (n != ssize_t(sizeof record) || record.stop)
            return;
        if (count > 0 && record.sentByKill && record.sender == lastSender)
            continue;  // the same request, sent to the process and to its group
        lastSender = record.sentByKill ? record.sender : 0;
        m_onInterrupt(++count);
    }
}

} // namespace replhost::cli
