// lowbit: error reporting shared by every layer of the library.
//
// Two shapes, one message style. `Status` is returned where failure is an expected
// answer (can_implement(), validate()); `lowbit::Error` is thrown where a caller
// asked for something that cannot be done (a corrupt file, an invalid tensor).
// Messages name the operand, the expected and the actual value, and start with
// "lowbit: ", e.g. "lowbit: weight K=4100 is not a multiple of group_size=128 (w4g128)".
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace lowbit {

class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  static Status Ok() { return Status(); }
  static Status Fail(std::string message) { return Status(std::move(message)); }

  bool ok() const { return message_.empty(); }
  explicit operator bool() const { return ok(); }
  // Empty when ok(); otherwise a one-line reason starting with "lowbit: ".
  const std::string& message() const { return message_; }

 private:
  explicit Status(std::string message);
  std::string message_;
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message);
};

// Throws lowbit::Error with the status message if `s` is not ok.
void throw_if_error(const Status& s);

}  // namespace lowbit
