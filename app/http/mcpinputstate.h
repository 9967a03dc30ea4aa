// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QString>

#include <optional>

namespace replhost::http {

// The requestState of an MCP InputRequiredResult (the stateless revision's multi round-trip
// requests): it names the execution whose question the client is to answer when it calls the
// tool again. It passes through the client, so it is signed (HMAC-SHA256 with a key drawn when
// the process starts) and read back only when the signature holds: a state cannot be made up,
// altered, or taken to another server process. It carries no secret (an execution id is no
// credential: the bearer token is), and whether the execution still waits is checked when it
// comes back.
//
// Threading: any thread (the key is made once, thread-safely).
class McpInputState {
public:
    McpInputState() = delete;

    static QString make(const QString &executionId);
    // The execution a state names; nothing for anything this process did not make.
    static std::optional<QString> read(const QString &state);
    // The same on raw bytes as a client may send them (what the fuzz target feeds).
    static std::optional<QString> read(const QByteArray &state);
};

} // namespace replhost::http
