#include "lowbit/status.hpp"

namespace lowbit {

Status::Status(std::string message) : message_(std::move(message)) {
  if (message_.empty()) message_ = "lowbit: unspecified error";
}

Error::Error(const std::string& message) : std::runtime_error(message) {}

void throw_if_error(const Status& s) {
  if (!s.ok()) throw Error(s.message());
}

}  // namespace lowbit
