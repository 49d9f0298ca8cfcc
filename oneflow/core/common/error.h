// Error types thrown by the core. The Python binding maps each class to the Python exception of
// the same name (see oneflow/api/python/module.cpp); LinAlgError to oneflow.linalg.LinAlgError.
// Every message starts with the op's name and says what was expected and what came: "matmul:
// expected ..., got ...".
#pragma once

#include <charconv>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

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
// A numerical failure of a linear algebra routine (a singular matrix); Python's
// oneflow.linalg.LinAlgError, a subclass of RuntimeError as in PyTorch.
class LinAlgError : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

namespace detail {
// Appending without iostreams: no locale is consulted (a process may hold a global locale
// installed by another library's C++ runtime), and it is faster.
inline void append(std::string& s, std::string_view v) { s.append(v); }
inline void append(std::string& s, const char* v) { s.append(v ? v : "(null)"); }
inline void append(std::string& s, char c) { s.push_back(c); }
inline void append(std::string& s, bool b) { s.append(b ? "True" : "False"); }
template <typename T>
requires(std::is_integral_v<T> || std::is_floating_point_v<T>) void append(std::string& s, T v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  s.append(buf, r.ptr);
}
}  // namespace detail

// Concatenates strings and numbers into one string.
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::string s;
  (detail::append(s, args), ...);
  return s;
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
