// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "result.h"
#include "serverconnection.h"

#include <nlohmann/json.hpp>

#include <string>

namespace replhost::kernel {

// The replhost context a kernel runs its cells in, and what happens to it when the kernel goes.
//
// A kernel owns the context it created: shutdown deletes it, a restart restarts it. A kernel bound
// to a context with --context only borrows it: shutdown leaves it (its state stays, for the next
// kernel or any other client), a restart restarts it.
//
// Jupyter restarts a kernel by ending its process and starting a new one with the same connection
// file. So that the new process keeps the owned context, the old one leaves a note in the data dir
// (kernels/<hash of the connection key>) naming the context it restarted; the new process takes
// the context over and removes the note. The connection's key is the secret the frontend signs
// messages with, so only the kernel the same frontend starts again finds the note.
//
// Threading: one thread at a time.
class ContextLease {
public:
    struct Request {
        std::string language;       // plugin id, for a new context
        std::string contextId;      // --context: borrow this one instead
        std::string name;           // the new context's name (the notebook's), may be empty
        std::string connectionKey;  // the connection file's key, for the restart note; may be empty
    };

    // Takes over a restarted context, borrows the bound one, or creates one. Failures: the
    // server's (unknown context or language, unreachable server).
    static cli::Result<ContextLease> acquire(ServerConnection &server, const Request &request);

    const std::string &id() const { return m_id; }
    const std::string &language() const { return m_language; }
    // The interpreter's version as the server reports it ("3.11.2"); empty when it does not say.
    const std::string &languageVersion() const { return m_languageVersion; }
    bool owned() const { return m_owned; }

    // restart: the context is restarted (a fresh interpreter, the same id) and, when owned, a
    // note is left for the kernel Jupyter starts next. Otherwise an owned context is deleted.
    cli::Result<void> release(ServerConnection &server, bool restart) const;

private:
    static std::string versionIn(const nlohmann::json &object, const char *key = "language_version");
    static std::string notePath(const ServerConnection &server, const std::string &connectionKey);

    std::string m_id;
    std::string m_language;
    std::string m_languageVersion;
    std::string m_connectionKey;
    bool m_owned = false;
};

} // namespace replhost::kernel
