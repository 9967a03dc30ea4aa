// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <thread>

#include <sys/types.h>

namespace replhost::kernel {

// Notices that the process that started the kernel (the frontend's kernel manager) is gone: the
// kernel is then reparented, and getppid() changes. A frontend that crashes or is killed sends
// no shutdown_request, and without this its kernel — and the context it owns — would live on
// with nobody to talk to. (ipykernel watches its parent the same way on POSIX.)
//
// `onOrphaned` runs once, on the watch's own thread. Threading: construct and destroy on one
// thread; the watch thread is detached and ends with the process.
class ParentWatch {
public:
    explicit ParentWatch(std::function<void()> onOrphaned);

private:
    pid_t m_parent;
};

} // namespace replhost::kernel
