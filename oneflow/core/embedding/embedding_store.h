// The key-value store behind oneflow.one_embedding: rows of float32 addressed by 64-bit keys
// that need not be bounded by a vocabulary size. A key seen for the first time gets a row whose
// embedding part its table's initializer fills and whose optimizer-state part is zero.
//
// A row ("line") holds line_size floats: the embedding (embedding_dim) followed by the state of
// the optimizer that trains it (SGD momentum: one more embedding_dim; Adam: two; Adagrad: one).
// Gradients pushed by backward accumulate per key until an update consumes them, so duplicate
// keys in a batch and several backward passes before a step sum, as a dense embedding's
// gradient does.
//
// Kernels running in the eager engine's order use a store (ops/one_embedding_primitives); a
// small op may also run on a calling thread, so every operation takes the store's mutex.
// Host-side readers (size, snapshots) synchronise the engine first.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace oneflow::embedding {

struct Initializer {
  enum class Kind : int8_t { kUniform, kNormal, kConstant, kTruncNormal };
  Kind kind = Kind::kUniform;
  double a = 0;              // uniform: low; (truncated) normal: mean; constant: the value
  double b = 0;              // uniform: high; (truncated) normal: std
  double low = 0, high = 0;  // truncated normal: the bounds of the values
};

struct StoreOptions {
  int64_t embedding_dim = 0;  // the sum of column_dims
  int64_t line_size = 0;      // floats per row, >= embedding_dim
  // A row's embedding is a run of columns; each table has one initializer per column.
  std::vector<int64_t> column_dims;
  std::vector<std::vector<Initializer>> tables;
  uint64_t seed = 0;
  int64_t capacity = 0;  // rows; 0: unbounded
};

// The per-step rule an update applies to every row with a pending gradient.
struct UpdateRule {
  enum class Kind : int8_t { kSgd, kAdam, kAdagrad };
  Kind kind = Kind::kSgd;
  double momentum = 0, dampening = 0, nesterov = 0;     // SGD
  double beta1 = 0, beta2 = 0, eps = 0, decoupled = 0;  // Adam (eps also Adagrad)
  double initial_accumulator = 0;                       // Adagrad
  double weight_decay = 0;
  bool maximize = false;
  // Floats of state each kind keeps after the embedding, in units of embedding_dim.
  int64_t state_columns() const;
};

class Store {
 public:
  explicit Store(StoreOptions options);

  const StoreOptions& options() const { return options_; }
  int64_t size() const;
  int64_t pending() const;
  // An independent copy: rows, optimizer state and pending gradients.
  std::shared_ptr<Store> clone() const;

  // out[i, :embedding_dim] = the row of keys[i] (inserted when missing, initialised by
  // table_ids[i]'s initializer; table_ids may be null: table 0). A key equal to *padding gives
  // zeros and is not inserted.
  void lookup(const int64_t* keys, const int32_t* table_ids, int64_t n, const int64_t* padding,
              float* out);
  // Adds grad[i, :embedding_dim] to the pending gradient of keys[i] (padding keys skipped);
  // nothing is added when a key is missing (an error).
  void push_grad(const int64_t* keys, int64_t n, const int64_t* padding, const float* grad);
  void clear_grad();
  // Multiplies the pending gradients by `factor`; returns whether they were all finite before.
  bool scale_grad(double factor);
  // Applies `rule` with the per-step numbers `scalars` (SGD [lr]; Adam [lr, bias_correction1,
  // bias_correction2]; Adagrad [lr]) to the rows with pending gradients, then clears them.
  void update(const UpdateRule& rule, const double* scalars);

  // Whole rows (line_size floats each), for snapshots and the persistent-table tools.
  std::vector<int64_t> keys() const;
  void read_rows(const int64_t* keys, int64_t n, float* rows) const;   // missing keys: error
  void write_rows(const int64_t* keys, int64_t n, const float* rows);  // inserts or replaces
  void clear();

  // A snapshot directory: a "meta" text file, "keys" (int64), "values" (float32 rows) and
  // "fresh" (one byte a row: state not yet initialised by an optimizer). A load that fails
  // leaves the table as it was.
  void save(const std::string& dir) const;
  void load(const std::string& dir);

 private:
  Store(const Store& other);  // under other's lock (clone)
  void clear_unlocked();
  void clear_grad_unlocked();
  int64_t find(int64_t key) const;
  int64_t find_or_insert(int64_t key, int32_t table_id);
  void grow();
  void initialise(int64_t row, int64_t key, int32_t table_id);

  mutable std::mutex mu_;
  StoreOptions options_;
  // Open addressing with linear probing; slot_ holds row + 1 (0: empty).
  std::vector<int64_t> slot_;
  std::vector<int64_t> keys_;
  std::vector<float> values_;        // size() * line_size
  std::vector<uint8_t> fresh_;       // optimizer state not yet initialised
  std::vector<int32_t> pending_of_;  // per row: index into pending_rows_, or -1
  std::vector<int64_t> pending_rows_;
  std::vector<float> pending_grad_;  // pending_rows_.size() * embedding_dim
};

// Stores are named by a handle in the kernels' attributes.
int64_t register_store(std::shared_ptr<Store> store);
std::shared_ptr<Store> find_store(int64_t handle);  // throws RuntimeError when released
void release_store(int64_t handle);

}  // namespace oneflow::embedding
