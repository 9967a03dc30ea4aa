// SPDX-License-Identifier: Apache-2.0
#include "parentwatch.h"

#include <chrono>
#include <unistd.h>

namespace replhost::kernel {

ParentWatch::ParentWatch(std::function<void()> onOrphaned) : m_parent(::getppid())
{
    // getppid() is a cheap system call, and the kernel has no event for a parent's exit that a
    // detached thread could wait on (PR_SET_PDEATHSIG kills without a chance to clean up).
    std::thread([parent = m_parent, onOrphaned = std::move(onOrphaned)] {
        while (::getppid() == parent)
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
        onOrphaned();
    }).detach();
}

} // namespace replhost::kernel
