// SPDX-License-Identifier: Apache-2.0
// replhost-confine [--rlimit-as N] [--rlimit-cpu N] [--rlimit-nproc N] [--rlimit-fsize N]
//                  [--cgroup PROCS_FILE]... [--seccomp-fd FD] [--ignore-signals LIST]
//                  [--default-signals] -- PROGRAM ARGS...
//
// Applies each option in command-line order, then execv()s PROGRAM (an absolute path; PATH is
// not searched) with the same pid, so the worker's process group, pipes and environment are the
// ones its spawner set up. Limits set here before exec hold for the worker and everything it
// starts, with no window in which the worker runs unconfined.
//
// --seccomp-fd FD does not filter the launcher itself: it writes the sandbox's seccomp filter
// (seccompfilter.h) as BPF to a memory file on descriptor FD, inherited by PROGRAM, which is
// bwrap started with `--seccomp FD`: bwrap installs it in the sandbox, after setting up the
// namespaces that the filter would otherwise forbid it to make.
//
// Any failure: one line on stderr naming the option and the reason, exit status 127, and
// PROGRAM is never run. No Qt and no allocation-heavy work: this runs before every worker.
#include "seccompfilter.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

namespace {

constexpr int kFailure = 127;

[[noreturn]] void fail(const std::string &message)
{
    std::fprintf(stderr, "replhost-confine: %s\n", message.c_str());
    std::exit(kFailure);
}

[[noreturn]] void failErrno(const std::string &what, int error)
{
    fail(what + ": " + std::strerror(error));
}

// A positive decimal integer (what every limit option takes).
std::uint64_t parseCount(std::string_view option, const char *text)
{
    if (text == nullptr)
        fail(std::string(option) + " needs a value");
    const std::string_view value(text);
    std::uint64_t n = 0;
    bool valid = !value.empty() && value.size() <= 19;
    for (char c : value) {
        if (c < '0' || c > '9') {
            valid = false;
            break;
        }
        n = n * 10 + std::uint64_t(c - '0');
    }
    if (!valid || n == 0)
        fail(std::string(option) + ": '" + std::string(value) + "' is not a positive integer");
    return n;
}

void setLimit(std::string_view option, int resource, std::uint64_t value)
{
    rlimit current{};
    if (::getrlimit(resource, &current) != 0)
        failErrno(std::string(option), errno);
    rlimit wanted{};
    wanted.rlim_cur = rlim_t(value);
    wanted.rlim_max = rlim_t(value);
    if (resource == RLIMIT_CPU) {
        // SIGXCPU at the soft limit (its default action ends the process and names the cause);
        // SIGKILL one second later for a program that ignores SIGXCPU. With soft == hard the
        // kernel would send SIGKILL only, which names nothing.
        if (current.rlim_max == RLIM_INFINITY || current.rlim_max > rlim_t(value))
            wanted.rlim_max = rlim_t(value) + 1;
    }
    if (::setrlimit(resource, &wanted) != 0)
        failErrno(std::string(option) + " " + std::to_string(value), errno);
}

void joinCgroup(const char *procsFile)
{
    if (procsFile == nullptr)
        fail("--cgroup needs a cgroup.procs file");
    const int fd = ::open(procsFile, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        failErrno(std::string("--cgroup ") + procsFile, errno);
    const std::string pid = std::to_string(::getpid()) + "\n";
    ssize_t written;
    do {
        written = ::write(fd, pid.data(), pid.size());
    } while (written < 0 && errno == EINTR);
    const int error = errno;
    ::close(fd);
    if (written != ssize_t(pid.size()))
        failErrno(std::string("--cgroup ") + procsFile, written < 0 ? error : EIO);
}

int signalNumber(std::string_view name)
{
    if (!name.empty() && name.find_first_not_of("0123456789") == std::string_view::npos) {
        const int n = std::atoi(std::string(name).c_str());
        return n > 0 && n < NSIG ? n : 0;
    }
    if (name.substr(0, 3) == "SIG")
        name.remove_prefix(3);
    for (int n = 1; n < NSIG; ++n) {
        const char *abbrev = ::sigabbrev_np(n);
        if (abbrev != nullptr && name == abbrev)
            return n;
    }
    return 0;
}

// A comma-separated list of signal names (INT, SIGQUIT) or numbers, each set to SIG_IGN.
void ignoreSignals(const char *list)
{
    if (list == nullptr || *list == '\0')
        fail("--ignore-signals needs a list of signals such as INT,QUIT");
    std::string_view rest(list);
    while (true) {
        const size_t comma = rest.find(',');
        const std::string_view name = rest.substr(0, comma);
        const int n = signalNumber(name);
        if (n == 0)
            fail("--ignore-signals: '" + std::string(name) + "' is not a signal");
        struct sigaction ignore {};
        ignore.sa_handler = SIG_IGN;
        sigemptyset(&ignore.sa_mask);
        if (::sigaction(n, &ignore, nullptr) != 0)
            failErrno("--ignore-signals " + std::string(name), errno);
        if (comma == std::string_view::npos)
            break;
        rest.remove_prefix(comma + 1);
    }
}

// Every disposition back to SIG_DFL and an empty mask: undoes an --ignore-signals of an outer
// launcher (dispositions set to SIG_IGN survive exec) for the program this one runs.
void defaultSignals()
{
    struct sigaction reset {};
    reset.sa_handler = SIG_DFL;
    sigemptyset(&reset.sa_mask);
    for (int n = 1; n < NSIG; ++n) {
        if (n == SIGKILL || n == SIGSTOP)
            continue;
        // The C library keeps a few real-time signals for itself and refuses them (EINVAL).
        if (::sigaction(n, &reset, nullptr) != 0 && errno != EINVAL)
            failErrno("--default-signals " + std::to_string(n), errno);
    }
    sigset_t none;
    sigemptyset(&none);
    if (::sigprocmask(SIG_SETMASK, &none, nullptr) != 0)
        failErrno("--default-signals", errno);
}

} // namespace

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc; ++i) {
        const std::string_view option(argv[i]);
        const char *value = i + 1 < argc ? argv[i + 1] : nullptr;
        if (option == "--") {
            ++i;
            break;
        }
        if (option == "--rlimit-as") {
            setLimit(option, RLIMIT_AS, parseCount(option, value));
            ++i;
        } else if (option == "--rlimit-cpu") {
            setLimit(option, RLIMIT_CPU, parseCount(option, value));
            ++i;
        } else if (option == "--rlimit-nproc") {
            setLimit(option, RLIMIT_NPROC, parseCount(option, value));
            ++i;
        } else if (option == "--rlimit-fsize") {
            setLimit(option, RLIMIT_FSIZE, parseCount(option, value));
            ++i;
        } else if (option == "--cgroup") {
            joinCgroup(value);
            ++i;
        } else if (option == "--seccomp-fd") {
            const std::uint64_t fd = parseCount(option, value);
            if (fd < 3 || fd > 1023)
                fail("--seccomp-fd: a descriptor from 3 to 1023, not " + std::to_string(fd));
            if (const std::string error = writeSeccompFilter(int(fd)); !error.empty())
                fail("--seccomp-fd: " + error);
            ++i;
        } else if (option == "--ignore-signals") {
            ignoreSignals(value);
            ++i;
        } else if (option == "--default-signals") {
            defaultSignals();
        } else {
            fail("unknown option '" + std::string(option) + "' (options end with --)");
        }
    }
    if (i >= argc || std::string_view(argv[i - 1]) != "--")
        fail("no program to run: expected -- PROGRAM ARGS...");
    const char *program = argv[i];
    if (program[0] != '/')
        fail(std::string("the program must be an absolute path, not '") + program + "'");
    ::execv(program, argv + i);
    failErrno(std::string("cannot execute ") + program, errno);
}
