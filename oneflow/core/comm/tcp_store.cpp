#include "oneflow/core/comm/tcp_store.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "oneflow/core/common/error.h"

namespace oneflow::comm {

namespace {

// Wire format, both ways: a command byte, then length-prefixed fields.
//   'S' key value        -> 'K'
//   'G' key timeout_ms   -> 'K' value | 'T' (timed out)
//   'A' key delta        -> 'K' sum (8 bytes, little-endian like the host)
//   'R' rank ""          -> 'K'             (this connection is that rank's)
//   'D' "" ""            -> 'K' ranks       (comma-separated: ranks whose connections closed)
constexpr char kSet = 'S';
constexpr char kGet = 'G';
constexpr char kAdd = 'A';
constexpr char kRegister = 'R';
constexpr char kGone = 'D';
constexpr char kOk = 'K';
constexpr char kTimedOut = 'T';

std::string errno_text() { return std::strerror(errno); }

// Sends all of buf; false when the peer is gone.
bool send_all(int fd, const void* buf, size_t n) {
  const char* p = static_cast<const char*>(buf);
  while (n > 0) {
    const ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

// Receives exactly n bytes before `deadline`; false on a closed connection or the deadline.
bool recv_all(int fd, void* buf, size_t n, std::chrono::steady_clock::time_point deadline) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) return false;
    pollfd pfd{fd, POLLIN, 0};
    const int r = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    if (r == 0) continue;
    const ssize_t k = ::recv(fd, p, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool send_field(int fd, const void* data, uint32_t n) {
  return send_all(fd, &n, sizeof(n)) && (n == 0 || send_all(fd, data, n));
}

bool recv_field(int fd, std::vector<char>& out, std::chrono::steady_clock::time_point deadline) {
  uint32_t n = 0;
  if (!recv_all(fd, &n, sizeof(n), deadline)) return false;
  out.resize(n);
  return n == 0 || recv_all(fd, out.data(), n, deadline);
}

constexpr auto kForever = std::chrono::hours(24 * 365);

}  // namespace

// Rank 0's server: a listening socket and one thread per client connection (a process group
// has few ranks). The key-value map outlives the store object while threads still use it.
class TcpStoreServer : public std::enable_shared_from_this<TcpStoreServer> {
 public:
  explicit TcpStoreServer(int port) {
    fd_ = ::socket(AF_INET6, SOCK_STREAM, 0);
    bool v6 = fd_ >= 0;
    if (!v6) fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) throw RuntimeError("comm: cannot create the store's socket: " + errno_text());
    const int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    int rc;
    if (v6) {
      const int zero = 0;  // IPv4 clients too
      ::setsockopt(fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
      sockaddr_in6 addr{};
      addr.sin6_family = AF_INET6;
      addr.sin6_addr = in6addr_any;
      addr.sin6_port = htons(static_cast<uint16_t>(port));
      rc = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    } else {
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_ANY);
      addr.sin_port = htons(static_cast<uint16_t>(port));
      rc = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    }
    if (rc != 0 || ::listen(fd_, 128) != 0) {
      const std::string why = errno_text();
      ::close(fd_);
      throw RuntimeError("comm: rank 0 cannot serve the rendezvous store on port " +
                         std::to_string(port) + " (MASTER_PORT): " + why);
    }
  }
  ~TcpStoreServer() {
    if (fd_ >= 0) ::close(fd_);
  }
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  void start() {
    std::thread([self = shared_from_this()] { self->accept_loop(); }).detach();
  }
  // Stops accepting; connected clients' threads end when their clients close.
  void stop() {
    std::unique_lock<std::mutex> lk(mu_);
    stopped_ = true;
    if (fd_ < 0) return;
    ::shutdown(fd_, SHUT_RDWR);
    // Until the accepting thread has closed the socket (the port is then free).
    cv_.wait_for(lk, std::chrono::seconds(2), [&] { return fd_ < 0; });
  }

 private:
  void accept_loop() {
    for (;;) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        {
          std::lock_guard<std::mutex> lk(mu_);  // stopped: the port is free again
          ::close(fd_);
          fd_ = -1;
        }
        cv_.notify_all();
        return;
      }
      {
        std::lock_guard<std::mutex> lk(mu_);
        if (stopped_) {
          ::close(c);
          ::close(fd_);
          fd_ = -1;
          cv_.notify_all();
          return;
        }
      }
      const int one = 1;
      ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      std::thread([self = shared_from_this(), c] { self->serve(c); }).detach();
    }
  }

  void serve(int c) {
    const auto forever = std::chrono::steady_clock::now() + kForever;
    std::vector<char> key, value;
    std::string rank;  // registered by the client
    for (;;) {
      char cmd = 0;
      if (!recv_all(c, &cmd, 1, forever) || !recv_field(c, key, forever) ||
          !recv_field(c, value, forever))
        break;
      const std::string k(key.begin(), key.end());
      bool ok = true;
      if (cmd == kSet) {
        {
          std::lock_guard<std::mutex> lk(mu_);
          data_[k] = value;
        }
        cv_.notify_all();
        ok = send_all(c, &kOk, 1);
      } else if (cmd == kGet) {
        int64_t ms = 0;
        std::memcpy(&ms, value.data(), std::min(value.size(), sizeof(ms)));
        std::unique_lock<std::mutex> lk(mu_);
        const bool found =
            cv_.wait_for(lk, std::chrono::milliseconds(ms), [&] { return data_.count(k) != 0; });
        if (found) {
          const std::vector<char> v = data_[k];
          lk.unlock();
          ok = send_all(c, &kOk, 1) && send_field(c, v.data(), static_cast<uint32_t>(v.size()));
        } else {
          lk.unlock();
          ok = send_all(c, &kTimedOut, 1);
        }
      } else if (cmd == kAdd) {
        int64_t delta = 0, sum = 0;
        std::memcpy(&delta, value.data(), std::min(value.size(), sizeof(delta)));
        {
          std::lock_guard<std::mutex> lk(mu_);
          std::vector<char>& v = data_[k];
          if (v.size() == sizeof(sum)) std::memcpy(&sum, v.data(), sizeof(sum));
          sum += delta;
          v.resize(sizeof(sum));
          std::memcpy(v.data(), &sum, sizeof(sum));
        }
        cv_.notify_all();
        ok = send_all(c, &kOk, 1) && send_field(c, &sum, sizeof(sum));
      } else if (cmd == kRegister) {
        rank = k;
        ok = send_all(c, &kOk, 1);
      } else if (cmd == kGone) {
        std::string list;
        {
          std::lock_guard<std::mutex> lk(mu_);
          for (const std::string& r : gone_) list += (list.empty() ? "" : ",") + r;
        }
        ok = send_all(c, &kOk, 1) && send_field(c, list.data(), static_cast<uint32_t>(list.size()));
      } else {
        break;
      }
      if (!ok) break;
    }
    ::close(c);
    if (!rank.empty()) {
      std::lock_guard<std::mutex> lk(mu_);
      gone_.push_back(rank);
    }
  }

  int fd_ = -1;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::vector<char>> data_;
  std::vector<std::string> gone_;  // registered ranks whose connections closed
  bool stopped_ = false;
};

TcpStore::TcpStore(const std::string& host, int port, bool is_server,
                   std::chrono::milliseconds timeout)
    : host_(host), port_(port), timeout_(timeout) {
  if (port <= 0 || port > 65535)
    throw ValueError("comm: expected MASTER_PORT in [1, 65535], got " + std::to_string(port));
  if (is_server) {
    server_ = std::make_shared<TcpStoreServer>(port);
    server_->start();
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (rc != 0)
    throw RuntimeError("comm: cannot resolve MASTER_ADDR '" + host + "': " + gai_strerror(rc));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last_error = "no address";
  while (fd_ < 0) {
    for (addrinfo* a = res; a != nullptr && fd_ < 0; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
      if (fd < 0) continue;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        fd_ = fd;
      } else {
        last_error = errno_text();
        ::close(fd);
      }
    }
    if (fd_ >= 0) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::freeaddrinfo(res);
      if (server_) server_->stop();
      throw RuntimeError("comm: timed out after " + std::to_string(timeout.count() / 1000) +
                         " s connecting to the rendezvous store of rank 0 at " + host + ":" +
                         std::to_string(port) + " (" + last_error + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::freeaddrinfo(res);
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

TcpStore::~TcpStore() {
  if (fd_ >= 0) ::close(fd_);
  if (server_) server_->stop();
}

void TcpStore::stop_serving() {
  if (server_) server_->stop();
}

void TcpStore::register_rank(int rank) { request(kRegister, std::to_string(rank), {}, timeout_); }

std::vector<int> TcpStore::gone_ranks() {
  const std::vector<char> reply = request(kGone, "", {}, std::chrono::seconds(5));
  std::vector<int> ranks;
  std::string item;
  for (size_t i = 0; i <= reply.size(); ++i) {
    if (i == reply.size() || reply[i] == ',') {
      if (!item.empty()) ranks.push_back(std::stoi(item));
      item.clear();
    } else {
      item += reply[i];
    }
  }
  return ranks;
}

std::vector<char> TcpStore::request(char cmd, const std::string& key,
                                    const std::vector<char>& value,
                                    std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(mu_);
  // The server answers a get within its timeout; the reply may take a little longer to come.
  const auto deadline = std::chrono::steady_clock::now() + timeout + std::chrono::seconds(5);
  std::vector<char> reply;
  char status = 0;
  if (!send_all(fd_, &cmd, 1) || !send_field(fd_, key.data(), static_cast<uint32_t>(key.size())) ||
      !send_field(fd_, value.data(), static_cast<uint32_t>(value.size())) ||
      !recv_all(fd_, &status, 1, deadline))
    throw RuntimeError("comm: lost the connection to the rendezvous store of rank 0 at " + host_ +
                       ":" + std::to_string(port_) + " (did rank 0 exit?)");
  if (status == kTimedOut) {
    // The mesh's keys are rank numbers.
    const bool is_rank = !key.empty() && key.find_first_not_of("0123456789") == std::string::npos;
    throw RuntimeError("comm: timed out after " + std::to_string(timeout.count() / 1000) +
                       " s waiting for " + (is_rank ? "rank " + key : "key '" + key + "'") +
                       " to join the process group at " + host_ + ":" + std::to_string(port_));
  }
  if (cmd != kSet && cmd != kRegister && !recv_field(fd_, reply, deadline))
    throw RuntimeError("comm: lost the connection to the rendezvous store of rank 0 at " + host_ +
                       ":" + std::to_string(port_));
  return reply;
}

void TcpStore::set(const std::string& key, const std::vector<char>& data) {
  request(kSet, key, data, timeout_);
}

std::vector<char> TcpStore::get(const std::string& key) {
  std::vector<char> ms(sizeof(int64_t));
  const int64_t t = timeout_.count();
  std::memcpy(ms.data(), &t, sizeof(t));
  return request(kGet, key, ms, timeout_);
}

void TcpStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void TcpStore::wait(const std::vector<std::string>& keys,
                    const std::chrono::milliseconds& timeout) {
  std::vector<char> ms(sizeof(int64_t));
  const int64_t t = timeout.count();
  std::memcpy(ms.data(), &t, sizeof(t));
  for (const std::string& key : keys) request(kGet, key, ms, timeout);
}

int64_t TcpStore::add(const std::string& key, int64_t delta) {
  std::vector<char> d(sizeof(delta));
  std::memcpy(d.data(), &delta, sizeof(delta));
  const std::vector<char> r = request(kAdd, key, d, timeout_);
  int64_t sum = 0;
  std::memcpy(&sum, r.data(), std::min(r.size(), sizeof(sum)));
  return sum;
}

}  // namespace oneflow::comm
