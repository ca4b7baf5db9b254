// The plan on its own (no torch, no dispatcher): canonicalisation, kind, vectors, index width.
#include <gtest/gtest.h>

#include <stdexcept>

#include "plan/batch_indexer.h"
#include "plan/layout_plan.h"

using torch_transpose::LayoutPlan;
using torch_transpose::LayoutProblem;
using torch_transpose::PlanKind;
using torch_transpose::plan_layout_copy;

namespace {

// The problem of x.permute(dims).contiguous() for a contiguous x of the given shape.
LayoutProblem permute_problem(std::vector<int64_t> shape, std::vector<int> dims, int element_bytes = 4) {
  std::vector<int64_t> in_strides(shape.size());
  int64_t s = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    in_strides[d] = s;
    s *= shape[d];
  }
  LayoutProblem p;
  p.element_bytes = element_bytes;
  for (int d : dims) {
    p.sizes.push_back(shape[d]);
    p.in_strides.push_back(in_strides[d]);
  }
  p.out_strides.resize(dims.size());
  s = 1;
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    p.out_strides[d] = s;
    s *= p.sizes[d];
  }
  return p;
}

}  // namespace

TEST(LayoutPlan, IdentityMergesToOneContiguousCopy) {
  const LayoutPlan plan = plan_layout_copy(permute_problem({3, 5, 7}, {0, 1, 2}));
  EXPECT_EQ(plan.kind, PlanKind::Copy);
  ASSERT_EQ(plan.rank, 1);
  EXPECT_EQ(plan.sizes[0], 105);
  EXPECT_EQ(plan.in_strides[0], 1);
  EXPECT_EQ(plan.out_strides[0], 1);
}

TEST(LayoutPlan, MatrixTransposeTilesTheTwoFastDims) {
  const LayoutPlan plan = plan_layout_copy(permute_problem({300, 200}, {1, 0}));
  EXPECT_EQ(plan.kind, PlanKind::Transpose);
  ASSERT_EQ(plan.rank, 2);
  EXPECT_EQ(plan.out_fast_dim, 1);
  EXPECT_EQ(plan.in_fast_dim, 0);
  EXPECT_EQ(plan.sizes[plan.in_fast_dim], 200);   // input rows are 200 long
  EXPECT_EQ(plan.sizes[plan.out_fast_dim], 300);  // output rows are 300 long
  EXPECT_EQ(plan.in_strides[plan.out_fast_dim], 200);
  EXPECT_EQ(plan.batch_rank(), 0);
}

TEST(LayoutPlan, NchwToNhwcMergesSpatialDims) {
  const LayoutPlan plan = plan_layout_copy(permute_problem({8, 3, 17, 19}, {0, 2, 3, 1}));
  EXPECT_EQ(plan.kind, PlanKind::Transpose);
  ASSERT_EQ(plan.rank, 3);  // N, H*W, C
  EXPECT_EQ(plan.sizes[0], 8);
  EXPECT_EQ(plan.sizes[1], 17 * 19);
  EXPECT_EQ(plan.sizes[2], 3);
  EXPECT_EQ(plan.batch_rank(), 1);
}

TEST(LayoutPlan, InnerDimKeptInPlaceIsACopyOfRows) {
  const LayoutPlan plan = plan_layout_copy(permute_problem({2, 64, 4, 32}, {0, 2, 1, 3}, 2));
  EXPECT_EQ(plan.kind, PlanKind::Copy);
  EXPECT_EQ(plan.sizes[plan.out_fast_dim], 32);
  EXPECT_EQ(plan.batch_rank(), 3);
}

TEST(LayoutPlan, SizeOneDimsAreDroppedAndSizeZeroIsEmpty) {
  EXPECT_EQ(plan_layout_copy(permute_problem({1, 40, 1}, {2, 1, 0})).rank, 1);
  EXPECT_EQ(plan_layout_copy(permute_problem({4, 0, 9}, {2, 1, 0})).kind, PlanKind::Empty);
  const LayoutPlan scalar = plan_layout_copy(permute_problem({}, {}));
  EXPECT_EQ(scalar.kind, PlanKind::Copy);
  EXPECT_EQ(scalar.numel, 1);
}

TEST(LayoutPlan, StrideZeroInputIsNeverTheTiledDim) {
  LayoutProblem p;  // an expanded row: in strides (0, 1) into a (5, 7) contiguous output
  p.sizes = {5, 7};
  p.in_strides = {0, 1};
  p.out_strides = {7, 1};
  EXPECT_EQ(plan_layout_copy(p).kind, PlanKind::Copy);
  p.in_strides = {1, 0};  // an expanded column: still a copy, read by broadcast
  EXPECT_EQ(plan_layout_copy(p).kind, PlanKind::Copy);
}

TEST(LayoutPlan, VectorWidthFollowsAlignment) {
  LayoutProblem p = permute_problem({64, 128}, {1, 0});
  p.in_address = 4096;
  p.out_address = 8192;
  EXPECT_EQ(plan_layout_copy(p).vector_elems, 4);  // 16 bytes of fp32
  p.in_address = 4100;                              // 4 bytes past a 16-byte boundary
  EXPECT_EQ(plan_layout_copy(p).vector_elems, 1);
  LayoutProblem odd = permute_problem({63, 129}, {1, 0});  // odd row lengths misalign rows
  EXPECT_EQ(plan_layout_copy(odd).vector_elems, 1);
  LayoutProblem bytes = permute_problem({256, 512}, {1, 0}, 1);
  EXPECT_EQ(plan_layout_copy(bytes).vector_elems, 16);
}

TEST(LayoutPlan, MisalignedElementsAreSplitIntoPieces) {
  LayoutProblem p = permute_problem({10, 6}, {1, 0}, 8);
  p.in_address = 4;  // 8-byte elements at a 4-byte boundary move as two 4-byte pieces
  const LayoutPlan plan = plan_layout_copy(p);
  EXPECT_EQ(plan.element_bytes, 4);
  EXPECT_EQ(plan.numel, 120);
}

TEST(LayoutPlan, IndexWidthSwitchesTo64BitOnlyWhenNeeded) {
  EXPECT_FALSE(plan_layout_copy(permute_problem({4096, 4096}, {1, 0})).needs_64bit_index);
  // Many small matrices: huge numel, tiny in-tile offsets.
  EXPECT_FALSE(plan_layout_copy(permute_problem({1 << 20, 64, 64}, {0, 2, 1})).needs_64bit_index);
  // 2^31 + 2 rows of 2 columns: the transposed rows are longer than int32 can index.
  EXPECT_TRUE(plan_layout_copy(permute_problem({(int64_t{1} << 31) + 2, 2}, {1, 0})).needs_64bit_index);
}

TEST(LayoutPlan, MaxOffsetIsTheLastElements) {
  const LayoutPlan plan = plan_layout_copy(permute_problem({3, 5, 7}, {2, 0, 1}));
  EXPECT_EQ(plan.max_offset(plan.in_strides), 104);
  EXPECT_EQ(plan.max_offset(plan.out_strides), 104);
  LayoutProblem expanded = permute_problem({4, 64, 64}, {0, 2, 1});
  expanded.in_strides = {0, 1, 64};  // dim 0 expanded
  const LayoutPlan e = plan_layout_copy(expanded);
  EXPECT_EQ(e.max_offset(e.in_strides), 63 + 63 * 64);
  EXPECT_EQ(e.max_offset(e.out_strides), 4 * 64 * 64 - 1);
}

TEST(LayoutPlan, OffsetsFit32UpToTheLargestInt32) {
  EXPECT_TRUE(plan_layout_copy(permute_problem({3, 5, 7}, {2, 0, 1})).offsets_fit_32());
  for (const int64_t row : {int64_t{1} << 30, (int64_t{1} << 31) - 2, (int64_t{1} << 31) - 1}) {
    LayoutProblem far = permute_problem({2, 2}, {1, 0});
    far.in_strides = {row, 1};  // the last input element sits at row + 1
    EXPECT_EQ(plan_layout_copy(far).offsets_fit_32(), row + 1 <= 0x7fffffff) << "row stride " << row;
  }
}

TEST(LayoutPlan, MalformedProblemsThrow) {
  LayoutProblem p = permute_problem({3, 4}, {1, 0});
  p.element_bytes = 3;
  EXPECT_THROW(plan_layout_copy(p), std::invalid_argument);
  p = permute_problem({3, 4}, {1, 0});
  p.in_strides.pop_back();
  EXPECT_THROW(plan_layout_copy(p), std::invalid_argument);
  std::vector<int64_t> shape(17, 2);
  std::vector<int> reversed;
  for (int d = 16; d >= 0; --d) reversed.push_back(d);
  EXPECT_THROW(plan_layout_copy(permute_problem(shape, reversed)), std::length_error);
}

TEST(LayoutPlan, ExplainNamesKindAndDims) {
  const std::string text = plan_layout_copy(permute_problem({300, 200}, {1, 0})).explain();
  EXPECT_NE(text.find("transpose:"), std::string::npos);
  EXPECT_NE(text.find("sizes=[200, 300]"), std::string::npos);
  EXPECT_EQ(plan_layout_copy(permute_problem({0, 3}, {1, 0})).explain(), "empty: nothing to move");
}

// Dims with equal output and input strides keep their given order (the sort is stable), so the
// plan of a problem never depends on the sort's implementation.
TEST(LayoutPlan, TiedDimsKeepTheirOrder) {
  LayoutProblem p;
  p.sizes = {2, 3, 4};
  p.in_strides = {5, 5, 1};
  p.out_strides = {7, 7, 1};
  const LayoutPlan plan = plan_layout_copy(p);
  ASSERT_EQ(plan.rank, 3);
  EXPECT_EQ(plan.sizes[0], 2);
  EXPECT_EQ(plan.sizes[1], 3);
  EXPECT_EQ(plan.sizes[2], 4);
}

// The batch indexer walks the plan's batch dims in batch_dims()'s order, for transposes and copies.
TEST(LayoutPlan, BatchIndexerTakesTheBatchDimsInOrder) {
  for (const LayoutPlan& plan : {plan_layout_copy(permute_problem({20, 30, 40, 50, 60}, {4, 2, 0, 3, 1})),
                                 plan_layout_copy(permute_problem({8, 9, 10, 11}, {1, 0, 2, 3})),
                                 plan_layout_copy(permute_problem({300, 200}, {1, 0})),
                                 plan_layout_copy(permute_problem({3, 0, 5}, {2, 1, 0}))}) {
    const torch_transpose::BatchIndexer indexer = torch_transpose::BatchIndexer::from_plan(plan);
    const auto dims = plan.batch_dims();
    ASSERT_EQ(indexer.rank, static_cast<int>(dims.size())) << plan.explain();
    EXPECT_EQ(indexer.rank, plan.batch_rank()) << plan.explain();
    for (int i = 0; i < indexer.rank; ++i) {
      EXPECT_EQ(indexer.sizes[i], plan.sizes[dims[i]]);
      EXPECT_EQ(indexer.in_strides[i], plan.in_strides[dims[i]]);
      EXPECT_EQ(indexer.out_strides[i], plan.out_strides[dims[i]]);
    }
  }
}

// Problems keep their first kMaxPlanRank dims inline and move to the heap beyond: a problem of
// 40 dims, 37 of them size 1, plans as its 3 real dims do, and copies of a spilled list hold
// their own values.
TEST(LayoutPlan, LongProblemsSpillOutOfTheInlineDims) {
  const LayoutPlan short_plan = plan_layout_copy(permute_problem({5, 6, 7}, {2, 0, 1}));
  std::vector<int64_t> shape(40, 1);
  shape[3] = 5;
  shape[20] = 6;
  shape[39] = 7;
  std::vector<int> dims(40);
  for (int d = 0; d < 40; ++d) dims[d] = d;
  std::swap(dims[3], dims[39]);
  std::swap(dims[20], dims[39]);  // result positions 3, 20, 39 take dims 39, 3, 20: (7, 5, 6)
  const LayoutProblem long_problem = permute_problem(shape, dims);
  ASSERT_EQ(long_problem.sizes.size(), 40u);
  const LayoutPlan long_plan = plan_layout_copy(long_problem);
  EXPECT_EQ(long_plan.explain(), short_plan.explain());

  torch_transpose::InlineVector<int64_t, 4> list = {1, 2, 3};
  for (int64_t v = 4; v <= 9; ++v) list.push_back(v);  // spills at the fifth
  torch_transpose::InlineVector<int64_t, 4> copy = list;
  list[0] = -1;
  list.resize(2);
  ASSERT_EQ(copy.size(), 9u);
  for (int64_t v = 1; v <= 9; ++v) EXPECT_EQ(copy[v - 1], v);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0], -1);
  EXPECT_EQ(list[1], 2);
  list.resize(3);
  EXPECT_EQ(list[2], 0);  // value-initialised, as std::vector's
}
