// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "serverconnection.h"

#include <xeus/xhistory_manager.hpp>

#include <string>

namespace replhost::kernel {

// history_request answered from the context's history in replhost's database, so it holds every
// cell the context ran — through this kernel, an earlier one, or any other client — and survives
// restarts of the kernel and the server. Entries are (session 0, execution count, code); with
// output, the output is the text/plain of the cell's result ("" for a cell without one).
// `search` takes Jupyter's glob pattern (* and ?) over the code.
//
// store_inputs does nothing: the server records every run itself.
//
// Threading: xeus calls it on the shell thread only.
class ContextHistory : public xeus::xhistory_manager {
public:
    ContextHistory(cli::ServerLocator::Overrides overrides, std::string workspace, std::string contextId);

private:
    struct Entry {
        int line = 0;
        std::string code;
        std::string executionId;
    };

    void configure_impl() override {}
    void store_inputs_impl(int, int, const std::string &, const std::string &) override {}
    nl::json get_tail_impl(int n, bool raw, bool output) const override;
    nl::json get_range_impl(int session, int start, int stop, bool raw, bool output) const override;
    nl::json search_impl(const std::string &pattern, bool raw, bool output, int n, bool unique) const override;

    // Newest first, until `enough` says so or the history ends (at most kMaxEntries).
    std::vector<Entry> entries(const std::function<bool(const std::vector<Entry> &)> &enough) const;
    nl::json reply(const std::vector<Entry> &oldestFirst, bool output) const;

    static constexpr int kMaxEntries = 10000;

    mutable ServerConnection m_server;
    std::string m_contextId;
};

} // namespace replhost::kernel
