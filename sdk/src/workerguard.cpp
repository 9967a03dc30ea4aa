// SPDX-License-Identifier: Apache-2.0
#include "workerguard.h"

#include <QtGlobal>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace replhost::sdk {

namespace {

// One message on the pipe. Eight bytes, so every write is atomic (below PIPE_BUF) and the pipe
// only ever holds whole records.
struct Record {
    std::int32_t op;     // kWatch or kForget
    std::int32_t group;
};
constexpr std::int32_t kWatch = 1;
constexpr std::int32_t kForget = 2;
constexpr std::size_t kCapacity = 1 << 16;

// The guard's whole life. A fork of a threaded process may call only async-signal-safe
// functions: no allocation, no locks, no Qt.
[[noreturn]] void runGuard(int readFd)
{
    ::setsid();
    ::prctl(PR_SET_NAME, "replhost-guard", 0, 0, 0);
    for (int signal = 1; signal < NSIG; ++signal) {
        struct sigaction action {};
        action.sa_handler = SIG_DFL;
        ::sigaction(signal, &action, nullptr);  // fails harmlessly for SIGKILL, SIGSTOP, …
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);

    // The pipe on fd 3, /dev/null on 0-2, nothing else: no socket, lock or pipe of the host
    // stays open because of the guard.
    const int in = ::fcntl(readFd, F_DUPFD, 10);
    if (in < 0 || ::dup2(in, 3) != 3)
        ::_exit(1);
    const int null = ::open("/dev/null", O_RDWR);
    for (int fd = 0; fd <= 2; ++fd)
        ::dup2(null, fd);
    ::close_range(4, ~0U, 0);

    void *memory = ::mmap(nullptr, kCapacity * sizeof(pid_t), PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED)
        ::_exit(1);
    pid_t *groups = static_cast<pid_t *>(memory);
    std::size_t count = 0;

    Record records[512];
    for (;;) {
        const ssize_t n = ::read(3, records, sizeof records);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;  // end of file: the host is gone
        for (std::size_t i = 0; i < std::size_t(n) / sizeof(Record); ++i) {
            const Record &r = records[i];
            if (r.op == kWatch && r.group > 0 && count < kCapacity) {
                groups[count++] = r.group;
            } else if (r.op == kForget) {
                for (std::size_t j = 0; j < count; ++j) {
                    if (groups[j] == r.group) {
                        groups[j] = groups[--count];
                        break;
                    }
                }
            }
        }
    }
    for (std::size_t i = 0; i < count; ++i)
        ::kill(-groups[i], SIGKILL);
    ::_exit(0);
}

} // namespace

WorkerGuard &WorkerGuard::instance()
{
    static WorkerGuard guard;
    return guard;
}

WorkerGuard::WorkerGuard()
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        qWarning("replhost: cannot create the worker guard's pipe (%s); workers will not be "
                 "stopped if this process is killed",
                 std::strerror(errno));
        return;
    }
    const pid_t pid = ::fork();
    if (pid == 0)
        runGuard(fds[0]);
    ::close(fds[0]);
    if (pid < 0) {
        ::close(fds[1]);
        qWarning("replhost: cannot start the worker guard (%s); workers will not be stopped if "
                 "this process is killed",
                 std::strerror(errno));
        return;
    }
    // Never block the host on a stuck guard: a full pipe drops the message instead.
    ::fcntl(fds[1], F_SETFL, ::fcntl(fds[1], F_GETFL) | O_NONBLOCK);
    m_fd = fds[1];
    m_pid = pid;
}

WorkerGuard::~WorkerGuard()
{
    // At exit: the guard ends whatever is still watched, then itself.
    if (m_fd >= 0)
        ::close(m_fd);
}

void WorkerGuard::watch(pid_t processGroup)
{
    send(kWatch, processGroup);
}

void WorkerGuard::forget(pid_t processGroup)
{
    send(kForget, processGroup);
}

pid_t WorkerGuard::pid()
{
    const std::lock_guard lock(m_mutex);
    return m_pid;
}

void WorkerGuard::send(int op, pid_t processGroup)
{
    const std::lock_guard lock(m_mutex);
    if (m_fd < 0 || processGroup <= 0)
        return;
    const Record record{op, std::int32_t(processGroup)};
    ssize_t n;
    do {
        n = ::write(m_fd, &record, sizeof record);
    } while (n < 0 && errno == EINTR);
    if (n == ssize_t(sizeof record))
        return;
    if (errno == EPIPE) {
        // The guard was killed: collect it, and carry on without one.
        ::waitpid(m_pid, nullptr, WNOHANG);
        ::close(m_fd);
        m_fd = -1;
        qWarning("replhost: the worker guard (pid %d) is gone; workers will not be stopped if "
                 "this process is killed",
                 int(m_pid));
        m_pid = 0;
    }
}

} // namespace replhost::sdk
