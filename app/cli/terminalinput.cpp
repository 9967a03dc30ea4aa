// SPDX-License-Identifier: Apache-2.0
#include "terminalinput.h"

#include "console.h"

#include <cerrno>

#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

namespace replhost::cli {

namespace {

// Echo off for as long as it lives, when `password`.
class NoEcho {
public:
    explicit NoEcho(bool password)
    {
        if (password && ::tcgetattr(STDIN_FILENO, &m_saved) == 0) {
            termios quiet = m_saved;
            quiet.c_lflag &= ~tcflag_t(ECHO);
            m_active = ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) == 0;
        }
    }
    ~NoEcho()
    {
        if (m_active) {
            ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &m_saved);
            Console::out("\n");  // the Enter that was not echoed
        }
    }
    NoEcho(const NoEcho &) = delete;
    NoEcho &operator=(const NoEcho &) = delete;

private:
    termios m_saved {};
    bool m_active = false;
};

} // namespace

bool TerminalInput::available()
{
    return ::isatty(STDIN_FILENO) == 1;
}

TerminalInput::~TerminalInput()
{
    cancel();
}

void TerminalInput::ask(const std::string &prompt, bool password, Answer answer)
{
    cancel();
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        Console::complain("cannot read the answer from the terminal: no pipe");
        answer(std::nullopt);
        return;
    }
    m_cancelFd = fds[1];
    const int cancelRead = fds[0];
    m_thread = std::thread([this, prompt, password, answer = std::move(answer), cancelRead] {
        read(prompt, password, answer, cancelRead);
        ::close(cancelRead);
    });
}

void TerminalInput::cancel()
{
    if (m_cancelFd >= 0) {
        const char byte = 0;
        while (::write(m_cancelFd, &byte, 1) < 0 && errno == EINTR) {
        }
    }
    if (m_thread.joinable())
        m_thread.join();
    if (m_cancelFd >= 0)
        ::close(m_cancelFd);
    m_cancelFd = -1;
}

void TerminalInput::read(std::string prompt, bool password, const Answer &answer, int cancelFd)
{
    Console::out(prompt);
    const NoEcho noEcho(password);
    std::string line;
    for (;;) {
        pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {cancelFd, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        if (fds[1].revents != 0)
            return;  // the run ended, or a new question came
        char buffer[4096];
        const ssize_t got = ::read(STDIN_FILENO, buffer, sizeof buffer);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got <= 0) {
            // The end of input (Ctrl-D at the start of a line), or a terminal that went away.
            if (line.empty()) {
                answer(std::nullopt);
            } else {
                answer(line);
            }
            return;
        }
        line.append(buffer, size_t(got));
        const size_t end = line.find('\n');
        if (end != std::string::npos) {
            line.resize(end);
            if (!line.empty() && line.back() == '\r')
                line.pop_back();
            answer(line);
            return;
        }
    }
}

} // namespace replhost::cli
