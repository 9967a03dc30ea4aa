// SPDX-License-Identifier: Apache-2.0
#include "spawn.h"

#include "workerguard.h"

#include <QFile>
#include <QFileInfo>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace replhost::sdk {

namespace {

constexpr int kPipeSize = 1 << 20;

// Closes descriptors it still holds when it goes out of scope, so every failure path is clean.
struct FdSet {
    std::vector<int> fds;
    ~FdSet()
    {
        for (int fd : fds)
            if (fd >= 0)
                ::close(fd);
    }
    int take(int &fd)
    {
        for (int &held : fds)
            if (held == fd)
                held = -1;
        return std::exchange(fd, -1);
    }
};

QString errnoText(int error)
{
    return QString::fromLocal8Bit(std::strerror(error));
}

// The worker's ends are moved to fds ≥ 5, so that none of them is also a dup2 target (1-4) of
// another file action: the actions run in order and would otherwise overwrite each other, and a
// dup2 onto itself would leave FD_CLOEXEC set.
bool moveAboveFour(int &fd)
{
    if (fd >= 5)
        return true;
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 5);
    if (moved < 0)
        return false;
    ::close(fd);
    fd = moved;
    return true;
}

} // namespace

Result<SpawnedProcess> spawnProcess(const QString &program, const QStringList &arguments,
                                    const QByteArrayList &environment,
                                    const QString &workingDirectory)
{
    const QFileInfo programInfo(program);
    if (!programInfo.isAbsolute())
        return makeError(QStringLiteral("unavailable"),
                         QStringLiteral("cannot start %1: the program must be an absolute path")
                             .arg(program));
    if (!programInfo.isFile() || !programInfo.isExecutable())
        return makeError(QStringLiteral("unavailable"),
                         QStringLiteral("cannot start %1: no such executable file").arg(program));
    if (!workingDirectory.isEmpty() && !QFileInfo(workingDirectory).isDir())
        return makeError(QStringLiteral("unavailable"),
                         QStringLiteral("cannot start %1: working directory %2 does not exist")
                             .arg(program, workingDirectory));

    // [0] read end, [1] write end of: worker stdout, worker stderr, requests, events.
    int out[2] = {-1, -1}, err[2] = {-1, -1}, req[2] = {-1, -1}, evt[2] = {-1, -1};
    FdSet held;
    for (int *p : {out, err, req, evt}) {
        if (::pipe2(p, O_CLOEXEC) != 0)
            return makeError(QStringLiteral("internal"),
                             QStringLiteral("cannot create pipes for %1: %2")
                                 .arg(program, errnoText(errno)));
        held.fds.push_back(p[0]);
        held.fds.push_back(p[1]);
    }
    int workerOut = out[1], workerErr = err[1], workerReq = req[0], workerEvt = evt[1];
    for (int *fd : {&workerOut, &workerErr, &workerReq, &workerEvt}) {
        const int before = *fd;
        if (!moveAboveFour(*fd))
            return makeError(QStringLiteral("internal"),
                             QStringLiteral("cannot prepare pipes for %1: %2")
                                 .arg(program, errnoText(errno)));
        if (*fd != before)
            for (int &h : held.fds)
                if (h == before)
                    h = *fd;
    }
    // Only the host's ends are non-blocking: O_NONBLOCK belongs to the open file description, so
    // setting it on a worker's end would make the worker's writes fail with EAGAIN.
    for (int fd : {out[0], err[0], req[1], evt[0]})
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    // Room for bursts while the host is busy elsewhere; the default (64 KiB) is kept on failure
    // (for instance above the per-user pipe page limit).
    for (int fd : {out[0], err[0], evt[0]})
        ::fcntl(fd, F_SETPIPE_SZ, kPipeSize);

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, workerOut, 1);
    posix_spawn_file_actions_adddup2(&actions, workerErr, 2);
    posix_spawn_file_actions_adddup2(&actions, workerReq, 3);
    posix_spawn_file_actions_adddup2(&actions, workerEvt, 4);
    posix_spawn_file_actions_addclosefrom_np(&actions, 5);
    const QByteArray cwd = QFile::encodeName(workingDirectory);
    if (!cwd.isEmpty())
        posix_spawn_file_actions_addchdir_np(&actions, cwd.constData());

    // A host started with SIGINT ignored or blocked (from a script's `&`, a service manager)
    // would hand that on: runtimes then never see interrupts, and neither do their children.
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF
                                        | POSIX_SPAWN_SETSIGMASK);

    const QByteArray path = QFile::encodeName(program);
    QByteArrayList args;
    args.reserve(arguments.size() + 1);
    args.append(path);
    for (const QString &a : arguments)
        args.append(a.toUtf8());
    std::vector<char *> argv;
    argv.reserve(size_t(args.size()) + 1);
    for (QByteArray &a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    QByteArrayList envCopy = environment; // posix_spawn wants char *const[]
    std::vector<char *> envp;
    envp.reserve(size_t(envCopy.size()) + 1);
    for (QByteArray &e : envCopy)
        envp.push_back(e.data());
    envp.push_back(nullptr);

    WorkerGuard &guard = WorkerGuard::instance();  // started before the first worker
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, path.constData(), &actions, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0)
        return makeError(QStringLiteral("unavailable"),
                         QStringLiteral("cannot start %1: %2").arg(program, errnoText(rc)));

    // The worker is its own process group (POSIX_SPAWN_SETSID): the guard kills it all if this
    // process dies without doing so.
    guard.watch(pid);
    SpawnedProcess process;
    process.pid = pid;
    // The child is ours and not reaped yet, so its pid cannot have been reused in between.
    // (pidfds are always close-on-exec.)
    process.pidfd = int(::syscall(SYS_pidfd_open, pid, 0));
    process.stdoutFd = held.take(out[0]);
    process.stderrFd = held.take(err[0]);
    process.requestFd = held.take(req[1]);
    process.eventFd = held.take(evt[0]);
    return process; // the worker's ends close with `held`
}

} // namespace replhost::sdk
