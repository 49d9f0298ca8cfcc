// The graph tracer from C++: what a compiled program keeps, replays and refuses (nn.Graph itself
// is tested from Python, tests/python/test_graph.py).
#include <gtest/gtest.h>

#include "oneflow/core/common/error.h"
#include "oneflow/core/eager/engine.h"
#include "oneflow/core/functional/functional.h"
#include "oneflow/core/graph/graph.h"
#include "test_util.h"

namespace oneflow {
namespace {

namespace F = functional;
using test::from_vector;
using test::to_vector;

// Aborts a trace a failing assertion left open.
struct TraceGuard {
  ~TraceGuard() { graph::abort_trace(); }
};

TEST(Graph, ReplaysOnNewInputsAndDropsDeadSteps) {
  TraceGuard guard;
  Tensor x = from_vector({1, 2, 3}, {3});
  graph::begin_trace({x});
  Tensor unused = F::mul(x, Scalar::from_int(10));  // nothing reads it: dropped
  Tensor y = F::add(F::mul(x, Scalar::from_int(2)), Scalar::from_int(1));
  auto g = graph::end_trace({y});
  EXPECT_EQ(g->num_traced_steps(), 3u);
  EXPECT_EQ(g->num_steps(), 2u);
  EXPECT_EQ(to_vector(y), (std::vector<float>{3, 5, 7}));
  TensorList out = *g->run({from_vector({0, -1, 5}, {3})});
  EXPECT_EQ(to_vector(out[0]), (std::vector<float>{1, -1, 11}));
  EXPECT_NE(out[0].get(), y.get());
  EXPECT_FALSE(graph::tracing());
}

TEST(Graph, WritesThroughViewsOfCapturedTensorsAreKept) {
  TraceGuard guard;
  Tensor x = from_vector({1, 1}, {2});
  Tensor state = from_vector({0, 0, 0, 0}, {4});  // made before tracing: captured
  graph::begin_trace({x});
  F::add_(F::narrow(state, 0, 1, 2), x);  // written through a view, read by nobody in the graph
  auto g = graph::end_trace({});
  EXPECT_EQ(g->num_steps(), 2u);  // the view and the write
  g->run({from_vector({2, 3}, {2})});
  EXPECT_EQ(to_vector(state), (std::vector<float>{0, 3, 4, 0}));
}

TEST(Graph, WritesIntoMadeTensorsKeepTheirProducers) {
  TraceGuard guard;
  Tensor x = from_vector({1, 2}, {2});
  graph::begin_trace({x});
  Tensor y = F::mul(x, Scalar::from_int(1));
  F::fill_(F::narrow(y, 0, 0, 1), Scalar::from_int(7));
  auto g = graph::end_trace({y});
  EXPECT_EQ(to_vector((*g->run({from_vector({5, 6}, {2})}))[0]), (std::vector<float>{7, 6}));
}

TEST(Graph, RandomStepsDrawFreshNumbersInEagerOrder) {
  TraceGuard guard;
  manual_seed(123);
  Tensor eager1 = F::rand({8}, {DType::kFloat32, Device{}, ""});
  Tensor eager2 = F::rand({8}, {DType::kFloat32, Device{}, ""});
  manual_seed(123);
  Tensor x = from_vector({0}, {1});
  graph::begin_trace({x});
  Tensor r = F::add(F::rand({8}, {DType::kFloat32, Device{}, ""}), x);
  auto g = graph::end_trace({r});
  EXPECT_EQ(to_vector(r), to_vector(eager1));
  EXPECT_EQ(to_vector((*g->run({x}))[0]), to_vector(eager2));
}

TEST(Graph, RefusesHostComputationsAndWrongInputs) {
  TraceGuard guard;
  Tensor x = from_vector({1, 0, 2}, {3});
  graph::begin_trace({x});
  EXPECT_THROW(graph::begin_trace({x}), RuntimeError);
  EXPECT_THROW(F::nonzero(F::gt(x, Scalar::from_int(0))), RuntimeError);
  auto g = graph::end_trace({F::mul(x, x)});
  EXPECT_THROW(g->run({}), ValueError);
  EXPECT_THROW(g->run({from_vector({1, 2}, {2})}), ValueError);
  EXPECT_THROW(graph::end_trace({}), RuntimeError);
  graph::abort_trace();  // harmless when not tracing
  EXPECT_EQ(to_vector((*g->run({x}))[0]), (std::vector<float>{1, 0, 4}));
}

TEST(Graph, CapturedTensorsThatChangedLayoutMakeThePlanStale) {
  TraceGuard guard;
  Tensor x = from_vector({1, 2}, {2});
  Tensor w = from_vector({3, 4}, {2});
  graph::begin_trace({x});
  auto g = graph::end_trace({F::mul(x, w)});
  EXPECT_EQ(to_vector((*g->run({x}))[0]), (std::vector<float>{3, 8}));
  w->set_data(*from_vector({1, 2, 3, 4}, {4}));  // as `w.data = ...` does
  EXPECT_FALSE(g->run({x}).has_value());
}

TEST(Graph, UnusedRandomStepsStillAdvanceTheGenerator) {
  TraceGuard guard;
  const CreationOptions opts{DType::kFloat32, Device{}, ""};
  manual_seed(7);
  F::rand({8}, opts);
  F::rand({8}, opts);
  const std::vector<float> third = to_vector(F::rand({8}, opts));
  manual_seed(7);
  Tensor x = from_vector({1}, {1});
  graph::begin_trace({x});
  F::rand({8}, opts);  // read by nobody
  auto g = graph::end_trace({F::add(x, Scalar::from_int(1))});
  EXPECT_EQ(g->num_steps(), 2u);
  g->run({x});
  EXPECT_EQ(to_vector(F::rand({8}, opts)), third);
}

TEST(Graph, AliasesOfInputsThatShareMemoryNameTheRightInput) {
  TraceGuard guard;
  Tensor v = from_vector({1, 2, 3, 4}, {4});
  Tensor a = F::narrow(v, 0, 0, 2), b = F::narrow(v, 0, 2, 2);
  graph::begin_trace({a, b});
  auto g = graph::end_trace({F::add(a, alias_detached(b))});
  EXPECT_EQ(to_vector((*g->run({from_vector({10, 20}, {2}), from_vector({1, 2}, {2})}))[0]),
            (std::vector<float>{11, 22}));
}

TEST(Graph, VariablesAreCapturedEvenWhenAnInputAliasesThem) {
  TraceGuard guard;
  Tensor w = from_vector({1, 2}, {2});
  graph::begin_trace({alias_detached(w)}, {w});
  auto g = graph::end_trace({F::mul(w, Scalar::from_int(3))});
  EXPECT_EQ(to_vector((*g->run({from_vector({7, 7}, {2})}))[0]), (std::vector<float>{3, 6}));
}

TEST(Graph, OnlyMadeTensorsMayChangeLayoutInPlace) {
  TraceGuard guard;
  Tensor x = from_vector({1, 2}, {2});
  graph::begin_trace({x});
  EXPECT_THROW(graph::record_rebind(x, F::narrow(x, 0, 0, 1)), RuntimeError);
  Tensor y = F::mul(x, Scalar::from_int(2));
  Tensor first = F::narrow(y, 0, 0, 1);
  graph::record_rebind(y, first);
  y->set_data(*first);  // y.squeeze_-style: y now names its first element
  auto g = graph::end_trace({F::add(y, Scalar::from_int(1))});
  EXPECT_EQ(to_vector((*g->run({from_vector({5, 6}, {2})}))[0]), (std::vector<float>{11}));
}

TEST(Graph, SavedProgramsLoadWithVariablesByNameAndConstantsByValue) {
  TraceGuard guard;
  Tensor x = from_vector({1, 2, 3, 4}, {2, 2});
  Tensor w = from_vector({1, 0, 0, 2}, {2, 2});   // a variable: saved by name
  Tensor c = from_vector({10, 20, 30, 40}, {4});  // captured, unnamed: saved by value
  graph::begin_trace({x}, {w});
  Tensor y = F::add(F::matmul(x, w), F::narrow(c, 0, 1, 2));
  auto g = graph::end_trace({F::transpose(y, 0, 1)});
  const std::string bytes = graph::save_graph(*g, {{"w", w}});
  EXPECT_NE(graph::graph_text(bytes).find("primitive: \"matmul\""), std::string::npos);
  EXPECT_NE(graph::graph_text(bytes).find("variable: \"w\""), std::string::npos);

  Tensor w2 = from_vector({2, 0, 0, 1}, {2, 2});
  auto loaded = graph::load_graph(bytes, {{"w", w2}});
  EXPECT_EQ(loaded->num_steps(), g->num_steps());
  F::fill_(c, Scalar::from_int(0));  // the loaded program kept c's value
  TensorList out = *loaded->run({from_vector({1, 1, 1, 1}, {2, 2})});
  EXPECT_EQ(out[0]->shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vector(F::contiguous(out[0])), (std::vector<float>{22, 22, 31, 31}));

  // a missing variable, another layout, bytes that are not a program
  EXPECT_THROW(graph::load_graph(bytes, {}), ValueError);
  EXPECT_THROW(graph::load_graph(bytes, {{"w", from_vector({1, 2}, {2})}}), ValueError);
  EXPECT_THROW(graph::load_graph("\x01\x02garbage", {{"w", w2}}), ValueError);
}

}  // namespace
}  // namespace oneflow
