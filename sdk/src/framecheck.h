// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "replhost/sdk/result.h"

#include <QJsonObject>
#include <QString>
#include <QStringView>

namespace replhost::sdk {

// What a worker may send on fd 4 (docs/worker-protocol.md §4), checked before the host acts on a
// frame. Worker output is untrusted input: code running in a context can write frames of its own
// on the event channel (a driver that runs user code in its own process cannot keep it from the
// fd), so a frame is taken only when its type is one the protocol defines and every member the
// host reads has the protocol's type and stays within the bounds below. A frame that fails is a
// protocol error: the caller ends the worker and reports it.
//
// Members the protocol does not define are allowed (drivers may add diagnostics) and passed on
// as data, within the same member count. The checks are of the frame alone; whether it fits the
// run (its execution id, its order) is the caller's to check.

enum class WorkerMessage {
    Hello,
    Started,
    Display,
    Result,
    Error,
    Done,
    CompleteReply,
    VariablesReply,
    ErrorReply,
    ShutdownReply,
    Log,
    Snapshot,
    SnapshotReply,
    RestoreReply,
    ClearOutput,
    InputRequest,
};

// The bounds. The frame itself is at most kMaxFrameBytes (framing.h); these keep single fields
// that have no reason to be large from being so, and lists from holding millions of entries.
struct FrameLimits {
    static constexpr qsizetype kMaxMembers = 64;          // members of the frame object
    static constexpr qsizetype kMaxIdChars = 256;         // `id`
    static constexpr qsizetype kMaxNameChars = 1024;      // ename, language, level, ...
    static constexpr qsizetype kMaxPathChars = 16384;     // done's `cwd`
    static constexpr qsizetype kMaxMimeTypes = 64;        // entries of a MIME bundle
    static constexpr qsizetype kMaxMimeTypeChars = 256;   // a MIME bundle's keys
    static constexpr qsizetype kMaxListEntries = 100000;  // traceback, matches, variables
    static constexpr int kMaxDepth = 512;                 // nesting of data and metadata values
    static constexpr qsizetype kMaxPromptChars = 65536;   // an input_request's `prompt`
};

// The type of `frame` if it is a frame of protocol §4 within the bounds, otherwise an error with
// code "protocol_error" whose message says what is wrong (quoting at most a short, printable
// excerpt of what the worker sent).
Result<WorkerMessage> checkWorkerFrame(const QJsonObject &frame);

// Whether `status` is one a driver may give a `done`: ok, error, interrupted.
bool isDoneStatus(QStringView status);

// A short excerpt of worker-sent text for a message: at most 40 characters, control characters
// shown as '?', in quotes.
QString quotedExcerpt(QStringView text);

} // namespace replhost::sdk
