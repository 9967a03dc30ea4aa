// SPDX-License-Identifier: Apache-2.0
#pragma once
// What waits in another process's pipe, for tests that must act while a worker's output is
// written but not yet read by the host.

#include <QByteArray>
#include <QString>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace replhost::testing {

// Bytes written to the pipe that is fd `fd` of process `pid` and not read yet; -1 when that fd
// is not a pipe this process can open.
inline int unreadBytesInPipe(qint64 pid, int fd)
{
    const QByteArray path = QStringLiteral("/proc/%1/fd/%2").arg(pid).arg(fd).toLocal8Bit();
    const int pipe = ::open(path.constData(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (pipe < 0)
        return -1;
    int unread = -1;
    if (::ioctl(pipe, FIONREAD, &unread) != 0)
        unread = -1;
    ::close(pipe);
    return unread;
}

} // namespace replhost::testing
