// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "exitstatus.h"

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace replhost::cli {

// Why a command could not do its work: the exit status it ends with and a sentence for people
// that says what happened and, where it can, what to do. Printed once, by main().
struct Failure {
    ExitStatus status = ExitStatus::Failed;
    std::string message;
    int httpStatus = 0;  // the server's status code when it refused the request, else 0
};

inline Failure fail(ExitStatus status, std::string message, int httpStatus = 0)
{
    return Failure{status, std::move(message), httpStatus};
}

// Either a T or a Failure: the client's errors are values, like the server's replhost::Result,
// which it cannot use because it links no Qt.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_v(std::move(value)) {}
    Result(Failure failure) : m_v(std::move(failure)) {}

    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }

    // Precondition: ok().
    T &value() & { return std::get<0>(m_v); }
    const T &value() const & { return std::get<0>(m_v); }
    T &&value() && { return std::get<0>(std::move(m_v)); }
    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }
    T &operator*() & { return value(); }
    const T &operator*() const & { return value(); }

    // Precondition: !ok().
    const Failure &failure() const { return std::get<1>(m_v); }

private:
    std::variant<T, Failure> m_v;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Failure failure) : m_failure(std::move(failure)) {}

    bool ok() const { return !m_failure.has_value(); }
    explicit operator bool() const { return ok(); }
    const Failure &failure() const { return *m_failure; }

private:
    std::optional<Failure> m_failure;
};

} // namespace replhost::cli
