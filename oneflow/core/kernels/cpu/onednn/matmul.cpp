// CPU matmul: oneDNN for float32 (its sgemm, or for batches of small matrices the matmul
// primitive cached by shape and strides; OpenBLAS's sdot / sgemv for a single row or column),
// OpenBLAS for float64, oneDNN's matmul primitive (or the float32 path) for bfloat16 and
// float16, a plain loop for the integer dtypes. All oneDNN calls live in
// kernels/cpu/onednn/ so a move to oneDNN's v3 API touches one folder (DESIGN.md section 9).
#include <cblas.h>

#include <dnnl.hpp>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "oneflow/core/kernels/common/layouts.h"
#include "oneflow/core/kernels/cpu/onednn/common.h"
#include "oneflow/core/kernels/cpu/onednn/kernels.h"
#include "oneflow/core/kernels/cpu/parallel.h"
#include "oneflow/core/ops/primitives.h"

namespace oneflow {

namespace {

class OneDnnMatmul {
 public:
  static OneDnnMatmul& get() {
    static OneDnnMatmul* instance = new OneDnnMatmul();
    return *instance;
  }

  // False when oneDNN has no kernel for the problem (a 16-bit type the CPU lacks instructions
  // for): the caller computes it another way.
  bool run(const Mat& a, const Mat& b, const Mat& c, const void* pa, const void* pb, void* pc,
           dnnl::memory::data_type dt = dnnl::memory::data_type::f32) {
    using dnnl::memory;
    const memory::dims da{a.batch, a.rows, a.cols}, sa{a.bstride, a.rstride, a.cstride};
    const memory::dims db{b.batch, b.rows, b.cols}, sb{b.bstride, b.rstride, b.cstride};
    const memory::dims dc{c.batch, c.rows, c.cols}, sc{c.bstride, c.rstride, c.cstride};
    // the key: the data type and the 18 dims and strides as raw bytes (formatting them cost
    // ~1 us per call)
    std::string key(1, static_cast<char>(dt));
    key.reserve(1 + 18 * sizeof(int64_t));
    for (const auto* v : {&da, &sa, &db, &sb, &dc, &sc})
      for (int64_t x : *v) key.append(reinterpret_cast<const char*>(&x), sizeof(x));
    memory::desc ma(da, dt, sa), mb(db, dt, sb), mc(dc, dt, sc);
    std::shared_ptr<Entry> entry = cache_.get(key, [&]() -> std::shared_ptr<Entry> {
      // Large products with B not transposed take the weights in the layout oneDNN's kernel
      // prefers (packed panels), reordered on each call: the reorder is O(k n) against the
      // O(m k n) product (1024^3 NN: 13.7 vs 16.1 ms unpacked). Smaller products and transposed
      // B read B as it is: there the reorder cost more than it saved (2-vCPU EPYC, oneDNN 2.6:
      // 256x1024 @ (1024x1024)^T 7.6 -> 4.5 ms, 128x2048 @ (512x2048)^T 3.9 -> 2.2 ms, the char
      // GPT's 2048x128x384/512 and 2048x512x128 products 5-15% faster).
      const bool b_transposed = b.cstride != 1 && b.cols > 1;
      const bool pack = !b_transposed && c.batch * c.rows * c.cols * a.cols >= (int64_t{1} << 29);
      memory::desc any_b = pack ? memory::desc(db, dt, memory::format_tag::any) : mb;
      const dnnl::primitive_attr attr = onednn::user_scratchpad();
      dnnl::matmul::primitive_desc pd;
      try {
        pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(ma, any_b, mc), attr, engine_);
      } catch (const dnnl::error&) {
        return nullptr;  // no kernel for this type on this CPU
      }
      auto e = std::make_shared<Entry>(
          Entry{dnnl::matmul(pd), pd.weights_desc(), pd.scratchpad_desc(), std::nullopt, {}});
      if (pd.weights_desc() != mb) {
        dnnl::reorder::primitive_desc rpd(engine_, mb, engine_, pd.weights_desc(), attr);
        e->reorder = dnnl::reorder(rpd);
        e->reorder_scratch = rpd.scratchpad_desc();
      }
      return e;
    });
    if (!entry) return false;
    dnnl::stream stream(engine_);
    memory am(ma, engine_, const_cast<void*>(pa)), bm(mb, engine_, const_cast<void*>(pb)),
        cm(mc, engine_, pc);
    if (entry->reorder) {
      Tensor packed_buffer =
          empty_tensor({static_cast<int64_t>(entry->weights.get_size())}, DType::kUInt8, Device{});
      memory packed(entry->weights, engine_, packed_buffer->data());
      onednn::execute(*entry->reorder, stream, {{DNNL_ARG_FROM, bm}, {DNNL_ARG_TO, packed}},
                      entry->reorder_scratch, engine_);
      onednn::execute(entry->prim, stream,
                      {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, packed}, {DNNL_ARG_DST, cm}},
                      entry->scratch, engine_);
    } else {
      onednn::execute(entry->prim, stream,
                      {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}},
                      entry->scratch, engine_);
    }
    stream.wait();
    return true;
  }

 private:
  OneDnnMatmul() : engine_(dnnl::engine::kind::cpu, 0) {}
  dnnl::engine engine_;
  struct Entry {
    dnnl::matmul prim;
    dnnl::memory::desc weights, scratch;
    std::optional<dnnl::reorder> reorder;
    dnnl::memory::desc reorder_scratch;
  };
  onednn::PrimitiveCache<Entry> cache_;
};

// BLAS wants each matrix with unit stride along rows or along columns.
bool blas_layout(const Mat& m) { return m.cstride == 1 || m.rstride == 1; }

// A float32 product with a single row or column (dot, mv, a vector times a matrix), one batch:
// OpenBLAS's sdot / sgemv directly. oneDNN's per-call setup (descriptors, the cache lookup, a
// stream) was most of a small product's time: dot of 1024 floats 4.1 -> ~1 us.
bool vector_product_f32(const Mat& a, const Mat& b, const Mat& c, const float* pa, const float* pb,
                        float* pc) {
  if (c.batch != 1 || (c.rows != 1 && c.cols != 1)) return false;
  // BLAS needs positive increments (an expanded operand has stride 0)
  if (a.rstride <= 0 || a.cstride <= 0 || b.rstride <= 0 || b.cstride <= 0 || c.rstride <= 0 ||
      c.cstride <= 0)
    return false;
  const int64_t k = a.cols;
  if (c.rows == 1 && c.cols == 1) {  // a row times a column
    *pc = cblas_sdot(k, pa, a.cstride, pb, b.rstride);
    return true;
  }
  if (c.cols == 1) {  // (m, k) x (k, 1): y[i] = sum_j a[i, j] b[j], written with c's row stride
    if (!blas_layout(a)) return false;
    const bool ta = a.cstride != 1;
    cblas_sgemv(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, ta ? k : c.rows, ta ? c.rows : k,
                1.0f, pa, std::max<int64_t>(1, ta ? a.cstride : a.rstride), pb, b.rstride, 0.0f, pc,
                c.rstride);
    return true;
  }
  // (1, k) x (k, n): y[j] = sum_i a[i] b[i, j]
  if (!blas_layout(b)) return false;
  const bool tb = b.cstride != 1;
  cblas_sgemv(CblasRowMajor, tb ? CblasNoTrans : CblasTrans, tb ? c.cols : k, tb ? k : c.cols, 1.0f,
              pb, std::max<int64_t>(1, tb ? b.cstride : b.rstride), pa, a.cstride, 0.0f, pc,
              c.cstride);
  return true;
}

// Every row of c (2-D, contiguous rows) set to `bias`, or (add) increased by it.
template <typename T>
void bias_rows(const Mat& c, T* pc, const T* bias, bool add) {
  OF_OMP_FOR_IF(
      c.rows * c.cols >= 65536, schedule(static), for (int64_t r = 0; r < c.rows; ++r) {
        T* row = pc + r * c.rstride;
        if (add) {
          for (int64_t j = 0; j < c.cols; ++j) row[j] += bias[j];
        } else {
          std::copy(bias, bias + c.cols, row);
        }
      });
}

// float32 products through oneDNN's BLAS-like sgemm (its GEMM driver, which packs both operands
// into panels), one matrix at a time: every single product, and batched ones from 256^3 per
// matrix. The matmul primitive (brgemm) reads B unpacked below 2^29 multiply-adds, and with B's
// rows 4 KiB apart (1024 floats) its speed depended on the process's memory layout: 256x1024 @
// 1024x1024 took 1.6 or 3.2 ms by run, the MLP train step 3.5 or 5.1 ms (2-vCPU AVX-512 Xeon,
// oneDNN 2.6); sgemm took 1.5-1.6 ms and 3.4-3.6 ms every run. It also matches MKL from 1024^3
// on (2048^3: 48-52 -> 41-45 ms, PyTorch 44-46) and has less set-up for tiny products (8x8x8:
// 5.2 -> 2.0 us). Many small matrices of a batch stay on the primitive, which runs them in one
// parallel region (32 x 64^3: 50 us, 105 us one sgemm call each).
bool gemm_f32(const Mat& a, const Mat& b, const Mat& c, const float* pa, const float* pb, float* pc,
              const float* bias) {
  if (c.batch > 1 && c.rows * c.cols * a.cols < (int64_t{1} << 24)) return false;
  if (c.cstride != 1 || c.rstride < c.cols || !blas_layout(a) || !blas_layout(b)) return false;
  if (a.rstride <= 0 || a.cstride <= 0 || b.rstride <= 0 || b.cstride <= 0) return false;
  const bool ta = a.cstride != 1, tb = b.cstride != 1;
  // A transposed B (x @ W.t(), nn.Linear's forward) below 1024 rows: sgemm's NT path ran 1.2-6x
  // behind its NN path there, while the matmul primitive reading B in place matched NN (2-vCPU
  // EPYC, oneDNN 2.6, k = n: m 16: 4.5-6x, m 64: 2.1-3.0x, m 128: 1.7-2.0x, m 256/512:
  // 1.2-1.5x; equal from m 1024).
  if (tb && !ta && c.rows < 1024 && a.bstride > 0 && b.bstride > 0) return false;
  const int64_t lda = ta ? a.cstride : a.rstride, ldb = tb ? b.cstride : b.rstride;
  if (lda < (ta ? a.rows : a.cols) || ldb < (tb ? b.rows : b.cols)) return false;  // overlapping
  if (bias) bias_rows(c, pc, bias, false);  // (2-D) the product is added to it
  for (int64_t i = 0; i < c.batch; ++i)
    dnnl::sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', c.rows, c.cols, a.cols, 1.0f, pa + i * a.bstride,
                lda, pb + i * b.bstride, ldb, bias ? 1.0f : 0.0f, pc + i * c.bstride, c.rstride);
  return true;
}

void gemm_f64(const Mat& a, const Mat& b, const Mat& c, const double* pa, const double* pb,
              double* pc, double beta) {
  for (int64_t i = 0; i < c.batch; ++i) {
    const bool ta = a.cstride != 1, tb = b.cstride != 1;
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                c.rows, c.cols, a.cols, 1.0, pa + i * a.bstride,
                std::max<int64_t>(1, ta ? a.cstride : a.rstride), pb + i * b.bstride,
                std::max<int64_t>(1, tb ? b.cstride : b.rstride), beta, pc + i * c.bstride,
                std::max<int64_t>(1, c.rstride));
  }
}

template <typename T>
void gemm_loop(const Mat& a, const Mat& b, const Mat& c, const T* pa, const T* pb, T* pc) {
  using C = compute_t<T>;
#pragma omp parallel for collapse(2) \
    schedule(static) if (c.batch * c.rows * c.cols * a.cols > 65536)
  for (int64_t i = 0; i < c.batch; ++i)
    for (int64_t r = 0; r < c.rows; ++r)
      for (int64_t col = 0; col < c.cols; ++col) {
        C acc = C(0);
        for (int64_t k = 0; k < a.cols; ++k)
          acc += C(pa[i * a.bstride + r * a.rstride + k * a.cstride]) *
                 C(pb[i * b.bstride + k * b.rstride + col * b.cstride]);
        pc[i * c.bstride + r * c.rstride + col * c.cstride] = T(acc);
      }
}

// A float32 product by the fastest path its layout allows.
void matmul_f32(const Mat& a, const Mat& b, const Mat& c, const float* pa, const float* pb,
                float* pc) {
  if (vector_product_f32(a, b, c, pa, pb, pc) || gemm_f32(a, b, c, pa, pb, pc, nullptr)) return;
  if (a.bstride > 0 && b.bstride > 0)
    OneDnnMatmul::get().run(a, b, c, pa, pb, pc);
  else
    gemm_loop<float>(a, b, c, pa, pb, pc);
}

// `m`'s matrices (one when its batch stride is 0) as contiguous float32.
template <typename T>
std::vector<float> to_float(const Mat& m, const T* p, Mat* out) {
  const int64_t batches = m.bstride == 0 ? 1 : m.batch;
  std::vector<float> v(static_cast<size_t>(batches * m.rows * m.cols));
  OF_OMP_FOR_IF(
      v.size() >= 65536, schedule(static), for (int64_t i = 0; i < batches * m.rows; ++i) {
        const int64_t bi = i / m.rows, r = i % m.rows;
        const T* src = p + bi * m.bstride + r * m.rstride;
        float* dst = v.data() + i * m.cols;
        for (int64_t j = 0; j < m.cols; ++j) dst[j] = static_cast<float>(src[j * m.cstride]);
      });
  *out = Mat{m.batch, m.rows, m.cols, m.bstride == 0 ? 0 : m.rows * m.cols, m.cols, 1};
  return v;
}

// bfloat16 and float16 products: oneDNN's matmul primitive in the 16-bit type (float32
// accumulation; the CPU's AVX512-BF16 dot products where it has them), else the operands
// widened to float32 for the float32 path. Either way each result is the float32 sum rounded
// once, PyTorch's rule. The plain loop took 256^3 bfloat16 in 15.6 ms (one thread), PyTorch 0.22.
template <typename T>
void matmul_16bit(const Mat& a, const Mat& b, const Mat& c, const T* pa, const T* pb, T* pc,
                  dnnl::memory::data_type dt) {
  if (a.bstride > 0 && b.bstride > 0 && c.bstride > 0 &&
      OneDnnMatmul::get().run(a, b, c, pa, pb, pc, dt))
    return;
  Mat fa, fb;
  const std::vector<float> va = to_float(a, pa, &fa), vb = to_float(b, pb, &fb);
  std::vector<float> vc(static_cast<size_t>(c.batch * c.rows * c.cols));
  const Mat fc{c.batch, c.rows, c.cols, c.rows * c.cols, c.cols, 1};
  matmul_f32(fa, fb, fc, va.data(), vb.data(), vc.data());
  OF_OMP_FOR_IF(
      vc.size() >= 65536, schedule(static), for (int64_t i = 0; i < c.batch * c.rows; ++i) {
        const int64_t bi = i / c.rows, r = i % c.rows;
        T* dst = pc + bi * c.bstride + r * c.rstride;
        const float* src = vc.data() + i * c.cols;
        for (int64_t j = 0; j < c.cols; ++j) dst[j * c.cstride] = T(src[j]);
      });
}

}  // namespace

namespace onednn {
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  dnnl::sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, alpha, a, std::max<int64_t>(1, lda), b, std::max<int64_t>(1, ldb), beta, c,
              std::max<int64_t>(1, ldc));
}
}  // namespace onednn

void Matmul::compute_cpu(const TensorList& in, const TensorList& out, const Attrs&) const {
  const Mat a = as_mat(in[0]), b = as_mat(in[1]), c = as_mat(out[0]);
  if (c.batch * c.rows * c.cols == 0) return;
  const DType dt = out[0]->dtype();
  // A bias (2-D products, float32/float64 only): BLAS starts from it (beta = 1), the other
  // paths add it after the product.
  const void* bias = in.size() == 3 ? in[2]->data() : nullptr;
  if (a.cols == 0) {  // empty inner dimension: the product is all zeros (or the bias)
    visit_dtype(dt, [&]<typename T>() {
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
        if (bias) return bias_rows<T>(c, out[0]->data_as<T>(), static_cast<const T*>(bias), false);
      std::fill(out[0]->data_as<T>(), out[0]->data_as<T>() + out[0]->numel(), T(0));
    });
    return;
  }
  bool bias_done = false;
  if (dt == DType::kFloat32) {
    const float *pa = in[0]->data_as<float>(), *pb = in[1]->data_as<float>();
    float* pc = out[0]->data_as<float>();
    const auto* pbias = static_cast<const float*>(bias);
    if (!vector_product_f32(a, b, c, pa, pb, pc)) {
      if (gemm_f32(a, b, c, pa, pb, pc, pbias)) {
        bias_done = true;
      } else if (a.bstride > 0 && b.bstride > 0) {
        OneDnnMatmul::get().run(a, b, c, pa, pb, pc);
      } else {
        gemm_loop<float>(a, b, c, pa, pb, pc);
      }
    }
  } else if (dt == DType::kBFloat16) {
    matmul_16bit(a, b, c, in[0]->data_as<bfloat16>(), in[1]->data_as<bfloat16>(),
                 out[0]->data_as<bfloat16>(), dnnl::memory::data_type::bf16);
  } else if (dt == DType::kFloat16) {
    matmul_16bit(a, b, c, in[0]->data_as<float16>(), in[1]->data_as<float16>(),
                 out[0]->data_as<float16>(), dnnl::memory::data_type::f16);
  } else if (dt == DType::kFloat64 && blas_layout(a) && blas_layout(b)) {
    if (bias) bias_rows(c, out[0]->data_as<double>(), static_cast<const double*>(bias), false);
    gemm_f64(a, b, c, in[0]->data_as<double>(), in[1]->data_as<double>(), out[0]->data_as<double>(),
             bias ? 1.0 : 0.0);
    bias_done = true;
  } else {
    visit_dtype(dt, [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>)
        gemm_loop<T>(a, b, c, in[0]->data_as<T>(), in[1]->data_as<T>(), out[0]->data_as<T>());
    });
  }
  if (bias && !bias_done) {
    if (dt == DType::kFloat32)
      bias_rows(c, out[0]->data_as<float>(), static_cast<const float*>(bias), true);
    else if (dt == DType::kFloat64)
      bias_rows(c, out[0]->data_as<double>(), static_cast<const double*>(bias), true);
    else
      throw_error<RuntimeError>(name(), "a fused bias takes float32 or float64 inputs");
  }
}

}  // namespace oneflow
