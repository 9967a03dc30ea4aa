// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <xeus/xserver_control_main.hpp>

namespace replhost::kernel {

class ReplhostInterpreter;

// xeus 2.4's ZeroMQ server with the control channel on its own thread (xserver_control_main), so
// that an interrupt_request or a shutdown_request is handled while a cell runs on the shell
// thread, with what xeus 2.4.1 leaves out:
// - its interrupt_request handler only replies; the "interrupt" message it publishes first is
//   turned into the interrupt of the running cell here (and not sent on: it is no message of the
//   protocol);
// - its shutdown_request tells the interpreter nothing of `restart`; the "shutdown" message it
//   publishes, which says, releases the context (restart or delete) before it goes out;
// - it counts executions itself, privately: its execute_input (sent before the run has a count)
//   is replaced by the interpreter's, and execute_reply carries replhost's count;
// - its input_request says `pwd` where the protocol says `password`: both are sent, so that a
//   frontend hides a password's answer.
//
// Threading: publish_impl and send_shell_impl run on the shell or control thread that sends.
class KernelServer : public xeus::xserver_control_main {
public:
    using xeus::xserver_control_main::xserver_control_main;

    // Set before the kernel starts; not owned (the kernel owns both).
    void setInterpreter(ReplhostInterpreter *interpreter) { m_interpreter = interpreter; }

    // The xkernel's server builder.
    static std::unique_ptr<xeus::xserver> make(xeus::xcontext &context, const xeus::xconfiguration &config,
                                               nl::json::error_handler_t errorHandler);

protected:
    void publish_impl(xeus::xpub_message message, xeus::channel channel) override;
    void send_shell_impl(xeus::xmessage message) override;
    void send_stdin_impl(xeus::xmessage message) override;

private:
    ReplhostInterpreter *m_interpreter = nullptr;
};

} // namespace replhost::kernel
