// SPDX-License-Identifier: Apache-2.0
// The requestState a stateless MCP client sends back with its retry of a run_code (McpInputState):
// arbitrary bytes are never taken for a state this process signed, and any execution id, the
// same bytes read as UTF-8, comes back from the state made for it.
#include "http/mcpinputstate.h"

#include <cstdint>
#include <cstdlib>

using replhost::http::McpInputState;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char *>(data), qsizetype(size));
    // Signed with a key drawn at start-up: what the fuzzer makes up cannot carry its HMAC.
    if (McpInputState::read(bytes))
        std::abort();
    const QString id = QString::fromUtf8(bytes);
    if (id.toUtf8().size() <= 256 && McpInputState::read(McpInputState::make(id)) != id)
        std::abort();
    return 0;
}
