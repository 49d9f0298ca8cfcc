// The rendezvous key-value store of a process group (DESIGN.md section 8): rank 0 serves it at
// MASTER_ADDR:MASTER_PORT, every rank (rank 0 included) is a client. Gloo's full-mesh connection
// exchanges the ranks' addresses through it.
//
// Every call has a deadline: a rank that never comes fails the others with an error that names
// the key (for the mesh's keys, the missing rank) instead of a hang.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gloo/rendezvous/store.h>

namespace oneflow::comm {

class TcpStoreServer;

class TcpStore final : public gloo::rendezvous::Store {
 public:
  // is_server: this process also serves the store (rank 0). Connecting retries until `timeout`
  // (the server may start later than its clients).
  TcpStore(const std::string& host, int port, bool is_server, std::chrono::milliseconds timeout);
  ~TcpStore() override;
  TcpStore(const TcpStore&) = delete;
  TcpStore& operator=(const TcpStore&) = delete;

  void set(const std::string& key, const std::vector<char>& data) override;
  // Waits until the key is set (within the timeout).
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;
  // Adds delta to the integer stored at key (0 when unset) and returns the sum.
  int64_t add(const std::string& key, int64_t delta);
  // Rank 0: stops accepting connections and frees the port (a group initialised again on the
  // same port then meets only the new store).
  void stop_serving();
  // Tells the server which rank this connection belongs to: when the connection closes while
  // the group lives (the process exited), the server lists the rank as gone.
  void register_rank(int rank);
  // The ranks whose connections to the server closed (rank 0: none while it serves).
  std::vector<int> gone_ranks();

 private:
  std::vector<char> request(char cmd, const std::string& key, const std::vector<char>& value,
                            std::chrono::milliseconds timeout);

  std::mutex mu_;  // one request at a time on the connection
  std::shared_ptr<TcpStoreServer> server_;
  std::string host_;
  int port_;
  int fd_ = -1;
  std::chrono::milliseconds timeout_;
};

}  // namespace oneflow::comm
