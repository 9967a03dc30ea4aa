// SPDX-License-Identifier: Apache-2.0
#include "kernelserver.h"

#include "replhostinterpreter.h"

#include <zmq.hpp>

namespace replhost::kernel {

std::unique_ptr<xeus::xserver> KernelServer::make(xeus::xcontext &context, const xeus::xconfiguration &config,
                                                  nl::json::error_handler_t errorHandler)
{
    return std::make_unique<KernelServer>(context.get_wrapped_context<zmq::context_t>(), config, errorHandler);
}

void KernelServer::publish_impl(xeus::xpub_message message, xeus::channel channel)
{
    const std::string type = message.header().value("msg_type", "");
    if (type == "interrupt") {
        m_interpreter->interrupt();
        return;
    }
    if (type == "shutdown")
        m_interpreter->release(message.content().value("restart", false));
    if (type == "execute_input" && !m_interpreter->publishingOwnInput())
        return;
    xeus::xserver_control_main::publish_impl(std::move(message), channel);
}

void KernelServer::send_shell_impl(xeus::xmessage message)
{
    if (message.header().value("msg_type", "") == "execute_reply" && m_interpreter->executionCount() > 0) {
        nl::json content = message.content();
        content["execution_count"] = m_interpreter->executionCount();
        xeus::xmessage corrected(message.identities(), message.header(), message.parent_header(), message.metadata(),
                                 std::move(content), std::move(message).buffers());
        xeus::xserver_control_main::send_shell_impl(std::move(corrected));
        return;
    }
    xeus::xserver_control_main::send_shell_impl(std::move(message));
}

void KernelServer::send_stdin_impl(xeus::xmessage message)
{
    if (message.header().value("msg_type", "") == "input_request" && !message.content().contains("password")) {
        nl::json content = message.content();
        content["password"] = content.value("pwd", false);
        xeus::xmessage corrected(message.identities(), message.header(), message.parent_header(), message.metadata(),
                                 std::move(content), std::move(message).buffers());
        xeus::xserver_control_main::send_stdin_impl(std::move(corrected));
        return;
    }
    xeus::xserver_control_main::send_stdin_impl(std::move(message));
}

} // namespace replhost::kernel
