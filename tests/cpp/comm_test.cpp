// The communication stream from C++: events order collectives with the CPU ops on their tensors
// and nothing else; the process group's argument checks. (Collectives between processes are
// tested from Python, tests/python/test_distributed.py, with the launcher.)
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "oneflow/core/comm/comm.h"
#include "oneflow/core/common/error.h"
#include "oneflow/core/eager/engine.h"
#include "oneflow/core/functional/functional.h"
#include "test_util.h"

namespace oneflow {
namespace {

namespace F = functional;
using test::from_vector;
using test::QueueEveryOp;
using test::to_vector;

// Waits (at most 10 s, so a wrong order fails instead of hanging) until `gate` opens.
void wait_for_gate(const std::atomic<bool>& gate) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!gate.load() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

TEST(CommStream, TasksRunAfterQueuedWritersAndBeforeLaterUsers) {
  QueueEveryOp queue;
  Tensor x = from_vector({1, 2, 3}, {3});
  Tensor y = F::mul(x, Scalar::from_int(2));  // queued: the task must see its values
  std::atomic<bool> gate{false}, done{false};
  std::vector<float> seen;
  TensorImpl* p = y.get();
  eager::enqueue_comm("test_task",
                      [&, p] {
                        wait_for_gate(gate);
                        const float* v = p->data_as<float>();
                        seen.assign(v, v + 3);
                        for (int i = 0; i < 3; ++i) p->data_as<float>()[i] += 100;
                        done.store(true);
                      },
                      {}, {y});
  // An op on other memory runs while the task waits for its gate.
  Tensor u = F::add(from_vector({5}, {1}), Scalar::from_int(1));
  EXPECT_EQ(to_vector(u), (std::vector<float>{6}));
  EXPECT_FALSE(done.load());
  // Ops on the task's memory run after it; so do host reads.
  Tensor z = F::add(y, Scalar::from_int(1));
  gate.store(true);
  EXPECT_EQ(to_vector(z), (std::vector<float>{103, 105, 107}));
  EXPECT_TRUE(done.load());
  EXPECT_EQ(seen, (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(to_vector(y), (std::vector<float>{102, 104, 106}));
}

TEST(CommStream, HostReadsWaitForTheTask) {
  Tensor y = from_vector({1, 2}, {2});
  std::atomic<bool> gate{false};
  TensorImpl* p = y.get();
  eager::enqueue_comm("test_task",
                      [&, p] {
                        wait_for_gate(gate);
                        p->data_as<float>()[0] = 42;
                      },
                      {}, {y});
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gate.store(true);
  });
  EXPECT_EQ(to_vector(y), (std::vector<float>{42, 2}));
  opener.join();
}

TEST(CommStream, ReadersOfOneTensorRunBesideEachOther) {
  QueueEveryOp queue;
  Tensor x = from_vector({1, 2}, {2});
  std::atomic<bool> gate{false}, second{false}, writer{false};
  int a = 0, b = 0, c = 0;  // three groups' keys: three streams
  // A collective of group a reads x until the gate opens.
  eager::enqueue_comm(
      "reader_a", [&] { wait_for_gate(gate); }, {x}, {}, &a);
  // Another group's collective reading x runs meanwhile, as do host reads of x.
  eager::enqueue_comm(
      "reader_b", [&] { second.store(true); }, {x}, {}, &b);
  EXPECT_EQ(std::vector<float>(static_cast<const float*>(x->storage()->read_data()),
                               static_cast<const float*>(x->storage()->read_data()) + 2),
            (std::vector<float>{1, 2}));
  wait_for_gate(second);
  EXPECT_TRUE(second.load());
  // A collective writing x waits for both readers; a CPU op reading x then waits for it.
  TensorImpl* p = x.get();
  eager::enqueue_comm(
      "writer_c",
      [&, p] {
        p->data_as<float>()[0] = 7;
        writer.store(true);
      },
      {}, {x}, &c);
  Tensor w = F::mul(x, Scalar::from_int(2));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(writer.load());
  gate.store(true);
  EXPECT_EQ(to_vector(w), (std::vector<float>{14, 4}));
  EXPECT_TRUE(writer.load());
}

TEST(CommStream, TaskErrorsSurfaceAtSynchronize) {
  Tensor y = from_vector({1}, {1});
  eager::enqueue_comm("failing_collective", [] { throw RuntimeError("peer gone"); }, {}, {y});
  try {
    eager::synchronize();
    FAIL() << "expected the task's error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("peer gone"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("failing_collective"), std::string::npos) << e.what();
  }
  // The engine stays usable.
  Tensor z = F::add(from_vector({1}, {1}), Scalar::from_int(1));
  EXPECT_EQ(to_vector(z), (std::vector<float>{2}));
}

TEST(CommStream, OpsOnAFailedTaskMemoryRaiseItsErrorWhenRead) {
  QueueEveryOp queue;
  Tensor y = from_vector({1}, {1});
  eager::enqueue_comm("failing_collective", [] { throw RuntimeError("peer gone"); }, {}, {y});
  Tensor z = F::mul(y, Scalar::from_int(2));  // waits for the task, then takes its error
  try {
    to_vector(z);
    FAIL() << "expected the task's error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("failing_collective"), std::string::npos) << e.what();
  }
  eager::synchronize();  // raised once
  Tensor w = F::add(from_vector({1}, {1}), Scalar::from_int(1));
  EXPECT_EQ(to_vector(w), (std::vector<float>{2}));
}

TEST(Comm, ChecksArguments) {
  EXPECT_THROW(comm::all_reduce(from_vector({1}, {1}), comm::ReduceOp::kSum), RuntimeError);
  EXPECT_THROW(comm::parse_reduce_op("avg", "all_reduce"), ValueError);
  EXPECT_THROW(comm::init(2, 2, "127.0.0.1", 29500, 1.0), ValueError);
  EXPECT_THROW(comm::init(0, 1, "127.0.0.1", 29500, 0.0), ValueError);
  comm::init(0, 1, "127.0.0.1", 0, 1.0);  // a group of one needs no store
  EXPECT_THROW(comm::init(0, 1, "127.0.0.1", 0, 1.0), RuntimeError);
  Tensor x = from_vector({1, 2, 3, 4}, {2, 2});
  EXPECT_THROW(comm::broadcast(x, 1), ValueError);
  EXPECT_THROW(comm::all_reduce(F::transpose(x, 0, 1), comm::ReduceOp::kSum), ValueError);
  Tensor out = from_vector({0, 0, 0}, {3});
  EXPECT_THROW(comm::all_gather(out, x), ValueError);
  Tensor out4 = from_vector({0, 0, 0, 0}, {4});
  comm::all_gather(out4, x);
  EXPECT_EQ(to_vector(out4), (std::vector<float>{1, 2, 3, 4}));
  comm::all_reduce(x, comm::ReduceOp::kSum);  // a group of one: unchanged
  EXPECT_EQ(to_vector(x), (std::vector<float>{1, 2, 3, 4}));
  comm::destroy();
  EXPECT_FALSE(comm::initialized());
}

}  // namespace
}  // namespace oneflow
