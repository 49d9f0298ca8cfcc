// The one_embedding key-value store (embedding_store.h).
#include "oneflow/core/embedding/embedding_store.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "oneflow/core/common/error.h"
#include "oneflow/core/common/philox.h"

namespace oneflow::embedding {

namespace {

constexpr const char* kOp = "one_embedding";

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

int64_t UpdateRule::state_columns() const {
  switch (kind) {
    case Kind::kSgd:
      return momentum != 0 ? 1 : 0;
    case Kind::kAdam:
      return 2;
    case Kind::kAdagrad:
      return 1;
  }
  return 0;
}

Store::Store(StoreOptions options) : options_(std::move(options)) {
  if (options_.embedding_dim <= 0)
    throw_error<ValueError>(kOp, "expected a positive embedding_dim, got ", options_.embedding_dim);
  if (options_.line_size < options_.embedding_dim)
    throw_error<ValueError>(kOp, "expected a storage_dim of at least embedding_dim (",
                            options_.embedding_dim, "), got ", options_.line_size);
  if (options_.tables.empty()) throw_error<ValueError>(kOp, "expected at least one table");
  int64_t sum = 0;
  for (int64_t d : options_.column_dims) sum += d;
  if (sum != options_.embedding_dim)
    throw_error<ValueError>(kOp, "the column dims sum to ", sum, ", not embedding_dim ",
                            options_.embedding_dim);
  for (const auto& t : options_.tables)
    if (t.size() != options_.column_dims.size())
      throw_error<ValueError>(kOp, "expected ", options_.column_dims.size(),
                              " column initializers per table, got ", t.size());
  slot_.assign(64, 0);
}

Store::Store(const Store& o)
    : options_(o.options_),
      slot_(o.slot_),
      keys_(o.keys_),
      values_(o.values_),
      fresh_(o.fresh_),
      pending_of_(o.pending_of_),
      pending_rows_(o.pending_rows_),
      pending_grad_(o.pending_grad_) {}

std::shared_ptr<Store> Store::clone() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::shared_ptr<Store>(new Store(*this));
}

int64_t Store::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(keys_.size());
}

int64_t Store::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(pending_rows_.size());
}

std::vector<int64_t> Store::keys() const {
  std::lock_guard<std::mutex> lock(mu_);
  return keys_;
}

int64_t Store::find(int64_t key) const {
  const uint64_t mask = slot_.size() - 1;
  for (uint64_t i = mix(static_cast<uint64_t>(key)) & mask;; i = (i + 1) & mask) {
    const int64_t s = slot_[i];
    if (s == 0) return -1;
    if (keys_[s - 1] == key) return s - 1;
  }
}

void Store::grow() {
  std::vector<int64_t> bigger(slot_.size() * 2, 0);
  const uint64_t mask = bigger.size() - 1;
  for (size_t r = 0; r < keys_.size(); ++r) {
    uint64_t i = mix(static_cast<uint64_t>(keys_[r])) & mask;
    while (bigger[i] != 0) i = (i + 1) & mask;
    bigger[i] = static_cast<int64_t>(r) + 1;
  }
  slot_.swap(bigger);
}

namespace {

// The value of N(mean, std^2) restricted to [low, high] at quantile u in (0, 1], by inverting
// the normal CDF (so bounds far in a tail cost no more than others): a safeguarded Newton
// iteration on the standardised bounds, on the upper-tail function when the window is above the
// mean (where the CDF rounds to 1) and on the CDF otherwise.
double trunc_normal(double mean, double std, double low, double high, double u) {
  if (std <= 0) return std::clamp(mean, low, high);
  double lo = (low - mean) / std, hi = (high - mean) / std;
  const bool upper = lo >= 0;
  const double kRsqrt2 = 0.70710678118654752440;
  // F increasing in x: the CDF, or minus the upper tail.
  auto F = [&](double x) {
    return upper ? -0.5 * std::erfc(x * kRsqrt2) : 0.5 * std::erfc(-x * kRsqrt2);
  };
  auto density = [&](double x) { return 0.3989422804014327 * std::exp(-0.5 * x * x); };
  const double f_lo = F(lo), f_hi = F(hi);
  const double target = f_lo + u * (f_hi - f_lo);
  double x = 0.5 * (lo + hi);
  for (int it = 0; it < 100; ++it) {
    const double f = F(x) - target;
    if (f > 0)
      hi = x;
    else
      lo = x;
    const double d = density(x);
    double next = d > 0 ? x - f / d : 0.5 * (lo + hi);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (std::abs(next - x) <= 1e-12 * (1 + std::abs(x))) {
      x = next;
      break;
    }
    x = next;
  }
  return std::clamp(mean + std * x, low, high);
}

// values[0, n) from `init`, drawing from `gen` at counters from *ctr on.
void fill(const Initializer& init, const Philox4x32& gen, uint64_t* ctr, float* v, int64_t n) {
  uint32_t w[4];
  switch (init.kind) {
    case Initializer::Kind::kConstant:
      std::fill(v, v + n, static_cast<float>(init.a));
      return;
    case Initializer::Kind::kUniform:
      for (int64_t j = 0; j < n; j += 4) {
        gen((*ctr)++, w);
        for (int64_t k = 0; k < std::min<int64_t>(4, n - j); ++k)  // 1 - (0, 1]: [0, 1)
          v[j + k] =
              static_cast<float>(init.a + (init.b - init.a) * (1.0 - uint_to_unit_float(w[k])));
      }
      return;
    case Initializer::Kind::kNormal:
      for (int64_t j = 0; j < n;) {
        gen((*ctr)++, w);
        float z[4];
        box_muller(uint_to_unit_float(w[0]), uint_to_unit_float(w[1]), &z[0], &z[1]);
        box_muller(uint_to_unit_float(w[2]), uint_to_unit_float(w[3]), &z[2], &z[3]);
        for (int k = 0; k < 4 && j < n; ++k) v[j++] = static_cast<float>(init.a + init.b * z[k]);
      }
      return;
    case Initializer::Kind::kTruncNormal:
      for (int64_t j = 0; j < n; j += 4) {
        gen((*ctr)++, w);
        for (int64_t k = 0; k < std::min<int64_t>(4, n - j); ++k)
          v[j + k] = static_cast<float>(
              trunc_normal(init.a, init.b, init.low, init.high, uint_to_unit_float(w[k])));
      }
      return;
  }
}

}  // namespace

void Store::initialise(int64_t row, int64_t key, int32_t table_id) {
  if (table_id < 0 || static_cast<size_t>(table_id) >= options_.tables.size())
    throw_error<IndexError>(kOp, "table id ", table_id, " of key ", key, " is out of range for ",
                            options_.tables.size(), " tables");
  const std::vector<Initializer>& columns = options_.tables[table_id];
  float* v = values_.data() + row * options_.line_size;
  // The initial row depends only on (seed, key): the same for any batch order or thread count.
  const Philox4x32 gen(options_.seed ^ mix(static_cast<uint64_t>(key) + 0x9E3779B97F4A7C15ull));
  uint64_t ctr = 0;
  int64_t offset = 0;
  for (size_t c = 0; c < columns.size(); ++c) {
    fill(columns[c], gen, &ctr, v + offset, options_.column_dims[c]);
    offset += options_.column_dims[c];
  }
  std::fill(v + offset, v + options_.line_size, 0.0f);
}

int64_t Store::find_or_insert(int64_t key, int32_t table_id) {
  const int64_t found = find(key);
  if (found >= 0) return found;
  const int64_t row = static_cast<int64_t>(keys_.size());
  if (options_.capacity > 0 && row >= options_.capacity)
    throw_error<RuntimeError>(kOp, "the table is full: ", options_.capacity,
                              " keys (the store options' capacity); key ", key, " is new");
  if ((keys_.size() + 1) * 4 > slot_.size() * 3) grow();
  keys_.push_back(key);
  values_.resize(values_.size() + options_.line_size);
  fresh_.push_back(1);
  pending_of_.push_back(-1);
  try {
    initialise(row, key, table_id);
  } catch (...) {
    keys_.pop_back();
    values_.resize(values_.size() - options_.line_size);
    fresh_.pop_back();
    pending_of_.pop_back();
    throw;
  }
  const uint64_t mask = slot_.size() - 1;
  uint64_t i = mix(static_cast<uint64_t>(key)) & mask;
  while (slot_[i] != 0) i = (i + 1) & mask;
  slot_[i] = row + 1;
  return row;
}

void Store::lookup(const int64_t* keys, const int32_t* table_ids, int64_t n, const int64_t* padding,
                   float* out) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t dim = options_.embedding_dim;
  for (int64_t i = 0; i < n; ++i) {
    float* o = out + i * dim;
    if (padding != nullptr && keys[i] == *padding) {
      std::fill(o, o + dim, 0.0f);
      continue;
    }
    const int64_t row = find_or_insert(keys[i], table_ids ? table_ids[i] : 0);
    std::memcpy(o, values_.data() + row * options_.line_size, dim * sizeof(float));
  }
}

void Store::push_grad(const int64_t* keys, int64_t n, const int64_t* padding, const float* grad) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t dim = options_.embedding_dim;
  // Every key first: a missing one adds nothing.
  std::vector<int64_t> rows(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    if (padding != nullptr && keys[i] == *padding) continue;
    rows[i] = find(keys[i]);
    // A key is in the table once its lookup ran; a snapshot loaded between forward and
    // backward may have dropped it.
    if (rows[i] < 0)
      throw_error<RuntimeError>(kOp, "a gradient arrived for key ", keys[i],
                                ", which is not in the table (was a snapshot loaded between "
                                "forward and backward?)");
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = rows[i];
    if (row < 0) continue;
    int32_t& p = pending_of_[row];
    if (p < 0) {
      p = static_cast<int32_t>(pending_rows_.size());
      pending_rows_.push_back(row);
      pending_grad_.resize(pending_grad_.size() + dim, 0.0f);
    }
    float* acc = pending_grad_.data() + static_cast<int64_t>(p) * dim;
    const float* g = grad + i * dim;
    for (int64_t j = 0; j < dim; ++j) acc[j] += g[j];
  }
}

void Store::clear_grad() {
  std::lock_guard<std::mutex> lock(mu_);
  clear_grad_unlocked();
}

bool Store::scale_grad(double factor) {
  std::lock_guard<std::mutex> lock(mu_);
  bool finite = true;
  for (float& g : pending_grad_) {
    finite = finite && std::isfinite(g);
    g = static_cast<float>(g * factor);
  }
  return finite;
}

void Store::clear_grad_unlocked() {
  for (int64_t row : pending_rows_) pending_of_[row] = -1;
  pending_rows_.clear();
  pending_grad_.clear();
}

void Store::update(const UpdateRule& rule, const double* s) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t dim = options_.embedding_dim;
  const int64_t need = dim * (1 + rule.state_columns());
  if (options_.line_size < need)
    throw_error<RuntimeError>(kOp, "the optimizer needs ", 1 + rule.state_columns(),
                              " columns of embedding_dim per row (storage_dim ", need,
                              "), but the store options give storage_dim ", options_.line_size,
                              ": pass size_factor=", 1 + rule.state_columns(),
                              " to the store options");
  const double lr = s[0], wd = rule.weight_decay;
  for (size_t k = 0; k < pending_rows_.size(); ++k) {
    const int64_t row = pending_rows_[k];
    float* e = values_.data() + row * options_.line_size;
    float* s1 = e + dim;
    float* s2 = e + 2 * dim;
    const float* gin = pending_grad_.data() + static_cast<int64_t>(k) * dim;
    const bool fresh = fresh_[row] != 0;
    for (int64_t j = 0; j < dim; ++j) {
      double g = rule.maximize ? -gin[j] : gin[j];
      switch (rule.kind) {
        case UpdateRule::Kind::kSgd: {
          double d = g + wd * e[j];
          if (rule.momentum != 0) {
            const double buf = fresh ? d : rule.momentum * s1[j] + (1 - rule.dampening) * d;
            s1[j] = static_cast<float>(buf);
            d = rule.nesterov != 0 ? d + rule.momentum * buf : buf;
          }
          e[j] = static_cast<float>(e[j] - lr * d);
          break;
        }
        case UpdateRule::Kind::kAdam: {
          double p = e[j];
          if (rule.decoupled != 0)
            p *= 1 - lr * wd;
          else
            g += wd * p;
          const double m0 = fresh ? 0.0 : s1[j], v0 = fresh ? 0.0 : s2[j];
          const double m = m0 + (1 - rule.beta1) * (g - m0);
          const double v = rule.beta2 * v0 + (1 - rule.beta2) * g * g;
          s1[j] = static_cast<float>(m);
          s2[j] = static_cast<float>(v);
          const double denom = std::sqrt(v) / std::sqrt(s[2]) + rule.eps;
          e[j] = static_cast<float>(p - lr / s[1] * m / denom);
          break;
        }
        case UpdateRule::Kind::kAdagrad: {
          g += wd * e[j];
          const double sum = (fresh ? rule.initial_accumulator : s1[j]) + g * g;
          s1[j] = static_cast<float>(sum);
          e[j] = static_cast<float>(e[j] - lr * g / (std::sqrt(sum) + rule.eps));
          break;
        }
      }
    }
    fresh_[row] = 0;
  }
  clear_grad_unlocked();
}

void Store::read_rows(const int64_t* keys, int64_t n, float* rows) const {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t line = options_.line_size;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = find(keys[i]);
    if (row < 0) throw_error<IndexError>(kOp, "key ", keys[i], " is not in the table");
    std::memcpy(rows + i * line, values_.data() + row * line, line * sizeof(float));
  }
}

void Store::write_rows(const int64_t* keys, int64_t n, const float* rows) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t line = options_.line_size;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = find_or_insert(keys[i], 0);
    std::memcpy(values_.data() + row * line, rows + i * line, line * sizeof(float));
    fresh_[row] = 0;
  }
}

void Store::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  clear_unlocked();
}

void Store::clear_unlocked() {
  slot_.assign(64, 0);
  keys_.clear();
  values_.clear();
  fresh_.clear();
  pending_of_.clear();
  pending_rows_.clear();
  pending_grad_.clear();
}

namespace {

void write_file(const std::filesystem::path& path, const void* data, size_t bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (bytes > 0) f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!f) throw_error<RuntimeError>(kOp, "could not write ", path.string());
}

template <typename T>
std::vector<T> read_file(const std::filesystem::path& path, size_t count) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw_error<RuntimeError>(kOp, "could not open ", path.string());
  std::vector<T> v(count);
  if (count > 0) f.read(reinterpret_cast<char*>(v.data()), count * sizeof(T));
  if (!f || f.peek() != std::ifstream::traits_type::eof())
    throw_error<RuntimeError>(kOp, path.string(), " does not hold ", count, " values of ",
                              sizeof(T), " bytes");
  return v;
}

}  // namespace

void Store::save(const std::string& dir_name) const {
  std::lock_guard<std::mutex> lock(mu_);
  const std::filesystem::path dir(dir_name);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw_error<RuntimeError>(kOp, "could not create ", dir_name, ": ", ec.message());
  write_file(dir / "keys", keys_.data(), keys_.size() * sizeof(int64_t));
  write_file(dir / "values", values_.data(), values_.size() * sizeof(float));
  write_file(dir / "fresh", fresh_.data(), fresh_.size());
  // The meta file last: a snapshot without it is incomplete.
  std::ostringstream meta;
  meta << "rows " << keys_.size() << "\nembedding_dim " << options_.embedding_dim
       << "\nstorage_dim " << options_.line_size << "\nkey int64\nvalue float32\n";
  const std::string text = meta.str();
  write_file(dir / "meta", text.data(), text.size());
}

void Store::load(const std::string& dir_name) {
  const std::filesystem::path dir(dir_name);
  std::ifstream m(dir / "meta");
  if (!m) throw_error<RuntimeError>(kOp, "no snapshot at ", dir_name, " (no meta file)");
  std::unordered_map<std::string, std::string> meta;
  for (std::string k, v; m >> k >> v;) meta[k] = v;
  auto number = [&](const char* k) -> int64_t {
    auto it = meta.find(k);
    if (it == meta.end())
      throw_error<RuntimeError>(kOp, "the snapshot's meta file at ", dir_name, " has no ", k);
    return std::stoll(it->second);
  };
  const int64_t rows = number("rows");
  if (number("embedding_dim") != options_.embedding_dim ||
      number("storage_dim") != options_.line_size)
    throw_error<RuntimeError>(kOp, "the snapshot at ", dir_name, " has embedding_dim ",
                              number("embedding_dim"), " and storage_dim ", number("storage_dim"),
                              "; this table has ", options_.embedding_dim, " and ",
                              options_.line_size);
  std::vector<int64_t> keys = read_file<int64_t>(dir / "keys", rows);
  std::vector<float> values = read_file<float>(dir / "values", rows * options_.line_size);
  std::vector<uint8_t> fresh = read_file<uint8_t>(dir / "fresh", rows);
  // Built aside and swapped in: a snapshot that does not fit leaves the table as it was.
  Store loaded(options_);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t row = loaded.find_or_insert(keys[r], 0);
    std::memcpy(loaded.values_.data() + row * options_.line_size,
                values.data() + r * options_.line_size, options_.line_size * sizeof(float));
    loaded.fresh_[row] = fresh[r];
  }
  std::lock_guard<std::mutex> lock(mu_);
  slot_.swap(loaded.slot_);
  keys_.swap(loaded.keys_);
  values_.swap(loaded.values_);
  fresh_.swap(loaded.fresh_);
  pending_of_.swap(loaded.pending_of_);
  pending_rows_.swap(loaded.pending_rows_);
  pending_grad_.swap(loaded.pending_grad_);
}

namespace {
std::mutex g_registry_mutex;
std::unordered_map<int64_t, std::shared_ptr<Store>>& registry() {
  static auto* r = new std::unordered_map<int64_t, std::shared_ptr<Store>>();
  return *r;
}
int64_t g_next_handle = 1;
}  // namespace

int64_t register_store(std::shared_ptr<Store> store) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  const int64_t h = g_next_handle++;
  registry()[h] = std::move(store);
  return h;
}

std::shared_ptr<Store> find_store(int64_t handle) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  auto it = registry().find(handle);
  if (it == registry().end())
    throw_error<RuntimeError>(kOp, "the embedding store ", handle, " was released");
  return it->second;
}

void release_store(int64_t handle) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  registry().erase(handle);
}

}  // namespace oneflow::embedding
