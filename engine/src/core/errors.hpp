// The two ways a request fails (docs/protocol.md, "Errors"): the request itself is wrong, or
// a valid request could not be carried out. The protocol unit turns them into typed replies.
#pragma once
#include <stdexcept>
#include <string>

namespace xlp {

// The request is invalid (unknown op or key, value out of range, inconsistent values); the
// user fixes the request. `key` names the one key at fault ("" when none or several are).
class BadParameter : public std::invalid_argument {
 public:
  BadParameter(std::string key, const std::string& message)
      : std::invalid_argument(message), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// A valid request that could not be carried out (port error, no neighbour reply, no state
// table yet): nothing in the request itself is wrong.
class ExecutionFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace xlp
