// SPDX-License-Identifier: Apache-2.0
#include "seccompfilter.h"

#include <seccomp.h>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace {

// System calls refused whatever their arguments.
const char *const kDenied[] = {
    // Mount table: remounting the read-only system writable, or a mount of one's own over it.
    "mount", "umount", "umount2", "pivot_root", "move_mount", "fsopen", "fsconfig", "fsmount",
    "fspick", "open_tree", "mount_setattr",
    // Replacing the kernel or adding code to it.
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    // Kernel interfaces with a long record of privilege escalations, of no use to a REPL.
    "bpf", "perf_event_open", "userfaultfd",
    // The kernel keyring is not namespaced by the mount or PID namespace: keys of the host's
    // processes could be found and used.
    "keyctl", "add_key", "request_key",
    // Reading and writing other processes' memory and registers, the sandbox's own included:
    // every process inside runs hostile code, and ptrace has been the way to escalate through
    // a more privileged process (bwrap's init) more than once.
    "ptrace", "process_vm_readv", "process_vm_writev",
    // Joining namespaces of other processes.
    "setns",
    // Files by handle bypass the path walk, and so every bind mount's boundary.
    "open_by_handle_at", "name_to_handle_at",
    // Host-wide state a process without capabilities cannot change anyway: refused before the
    // kernel's capability check, in case that check has a hole.
    "acct", "swapon", "swapoff", "reboot", "settimeofday", "clock_settime", "clock_adjtime",
    "adjtimex", "quotactl", "syslog", "vhangup", "lookup_dcookie", "nfsservctl",
    "iopl", "ioperm",
};

int addDenied(scmp_filter_ctx filter, const char *name, int error, unsigned count = 0,
              const scmp_arg_cmp *arguments = nullptr)
{
    const int number = seccomp_syscall_resolve_name(name);
    if (number == __NR_SCMP_ERROR)
        return 0;  // not a system call of this architecture
    return seccomp_rule_add_array(filter, SCMP_ACT_ERRNO(error), number, count, arguments);
}

std::string failure(const char *what, int rc)
{
    return std::string(what) + ": " + std::strerror(rc < 0 ? -rc : rc);
}

} // namespace

std::string writeSeccompFilter(int fd)
{
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    if (filter == nullptr)
        return "seccomp_init failed";
    struct Release {
        scmp_filter_ctx filter;
        ~Release() { seccomp_release(filter); }
    } release{filter};

    for (const char *name : kDenied)
        if (const int rc = addDenied(filter, name, EPERM); rc < 0)
            return failure(name, rc);

    // New user namespaces: inside one, a process has every capability again, over the
    // namespaces it then makes, and that is how most kernel bugs reachable from a sandbox are
    // reached. bwrap's --disable-userns limits their number as well; this refuses the flag.
    const scmp_arg_cmp newUser = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);
    for (const char *name : {"unshare", "clone"})
        if (const int rc = addDenied(filter, name, EPERM, 1, &newUser); rc < 0)
            return failure(name, rc);
    // clone3 takes its flags in a structure in memory, which a seccomp filter cannot read.
    // ENOSYS ("no such call") makes the C library fall back to clone (glibc does since 2.34
    // for threads and processes), whose flags are checked above.
    if (const int rc = addDenied(filter, "clone3", ENOSYS); rc < 0)
        return failure("clone3", rc);

    // Pushing characters into a terminal's input: they would be read by whatever reads the
    // terminal outside the sandbox (--new-session detaches from the terminal as well). The
    // request number is an int: only its low 32 bits count.
    for (const unsigned long request : {TIOCSTI, TIOCLINUX}) {
        const scmp_arg_cmp terminal = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, request);
        if (const int rc = addDenied(filter, "ioctl", EPERM, 1, &terminal); rc < 0)
            return failure("ioctl", rc);
    }

    const int memory = ::memfd_create("replhost-seccomp", MFD_CLOEXEC);
    if (memory < 0)
        return failure("memfd_create", errno);
    if (const int rc = seccomp_export_bpf(filter, memory); rc < 0) {
        ::close(memory);
        return failure("seccomp_export_bpf", rc);
    }
    if (::lseek(memory, 0, SEEK_SET) != 0) {
        const int error = errno;
        ::close(memory);
        return failure("lseek", error);
    }
    if (memory != fd) {
        // dup2 leaves the new descriptor without close-on-exec: bwrap must inherit it.
        if (::dup2(memory, fd) < 0) {
            const int error = errno;
            ::close(memory);
            return failure("dup2", error);
        }
        ::close(memory);
    } else if (::fcntl(fd, F_SETFD, 0) != 0) {
        return failure("fcntl", errno);
    }
    return {};
}
