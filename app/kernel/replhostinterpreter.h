// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "contextlease.h"
#include "languageinfo.h"
#include "serverconnection.h"

#include <xeus/xinterpreter.hpp>

#include <atomic>
#include <mutex>
#include <string>

namespace replhost::kernel {

// The Jupyter side of one replhost context: xeus calls it for the shell channel's requests and
// it answers them through replhost's HTTP API, as any other client of the server would.
//
// - execute_request: a streamed run (POST …/executions); its events become iopub messages as
//   they arrive (stream, display_data, execute_result, error), and its `done` the reply.
// - complete_request: the context's completion route; inspect_request: the context's variables
//   (the name under the cursor, its type and repr); is_complete_request: CellCompleteness.
// - input: when the execute_request has allow_stdin, the run may ask (input_request on the stdin
//   channel, answered by the frontend's input_reply); otherwise it finds the end of input.
//
// Threading: xeus calls the xinterpreter methods on its shell thread; interrupt() and release()
// are for the control thread (KernelServer), each thread with its own connection to the server.
class ReplhostInterpreter : public xeus::xinterpreter {
public:
    ReplhostInterpreter(cli::ServerLocator::Overrides overrides, std::string workspace, ContextLease lease);

    // Interrupts the running cell (and drops what is queued); the context keeps its state.
    void interrupt();
    // Shutdown or restart: what the lease says (ContextLease::release). Failures go to stderr.
    void release(bool restart);
    // What to release when the kernel ends without a shutdown_request (its frontend is gone).
    const ContextLease &lease() const { return m_lease; }

    // replhost's execution count of the latest cell, which is the context's (it goes on across
    // kernels bound to the same context), not a count of this kernel's own.
    int executionCount() const { return m_executionCount; }
    // Whether the execute_input being published is this interpreter's (with replhost's count)
    // rather than the one xeus 2.4 publishes before it knows the count.
    bool publishingOwnInput() const { return m_publishingOwnInput; }

private:
    void configure_impl() override {}
    nl::json execute_request_impl(int executionCounter, const std::string &code, bool silent, bool storeHistory,
                                  nl::json userExpressions, bool allowStdin) override;
    nl::json complete_request_impl(const std::string &code, int cursorPos) override;
    nl::json inspect_request_impl(const std::string &code, int cursorPos, int detailLevel) override;
    nl::json is_complete_request_impl(const std::string &code) override;
    nl::json kernel_info_request_impl() override;
    void shutdown_request_impl() override {}

    std::string contextPath(const std::string &tail = {}) const;
    void publishNote(bool silent, const std::string &text);
    // Asks the frontend (Jupyter's input_request on the stdin channel) and sends its answer to
    // the run's question. Shell thread.
    void answerInput(const std::string &executionId, const std::string &prompt, bool password);

    ServerConnection m_shell;    // the shell thread's
    ServerConnection m_answers;  // the shell thread's too, for answers while m_shell streams
    ServerConnection m_control;  // the control thread's
    ContextLease m_lease;
    LanguageInfo m_info;
    std::atomic<int> m_executionCount{0};
    std::atomic<bool> m_publishingOwnInput{false};
    std::mutex m_runningMutex;
    std::string m_runningExecution;  // the id of the run going on, guarded by m_runningMutex
};

} // namespace replhost::kernel
