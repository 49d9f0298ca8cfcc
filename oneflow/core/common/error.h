// Error types thrown by the core. The Python binding maps each class to the Python exception of
// the same name (see oneflow/api/python/module.cpp). Every message starts with the op's name and
// says what was expected and what came: "matmul: expected ..., got ...".
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace oneflow {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
class TypeError : public Error {
 public:
  using Error::Error;
};
class ValueError : public Error {
 public:
  using Error::Error;
};
class IndexError : public Error {
 public:
  using Error::Error;
};
class RuntimeError : public Error {
 public:
  using Error::Error;
};
class NotImplementedError : public Error {
 public:
  using Error::Error;
};

// Concatenates the streamable arguments into one string.
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// throw_error<ValueError>("sum", "expected dim in range [-2, 1], got ", dim);
template <typename E, typename... Args>
[[noreturn]] void throw_error(const char* op, const Args&... args) {
  throw E(str_cat(op, ": ", args...));
}

}  // namespace oneflow

// Checks an internal invariant; a failure is a bug in oneflow, reported as RuntimeError.
#define OF_ASSERT(cond)                                                                    \
  do {                                                                                     \
    if (!(cond))                                                                           \
      throw ::oneflow::RuntimeError(                                                       \
          ::oneflow::str_cat("internal error: ", #cond, " at ", __FILE__, ":", __LINE__)); \
  } while (0)
