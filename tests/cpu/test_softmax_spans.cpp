// softmax v06's span arithmetic (kernels/reduction/softmax/vector_spans.hpp), checked exhaustively
// over every row length v06 takes, against element-by-element counting.
#include <gtest/gtest.h>

#include "kernels/reduction/softmax/vector_spans.hpp"

using namespace klab::reduction::spans;

namespace {

constexpr int kMaxSlots = 8;  // v06_vector_spans.cu's

int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }

}  // namespace

TEST(SoftmaxSpans, SpanRowsAreTheFewestThatFillWholeVectors) {
  for (int kN : {4, 8}) {
    for (int cols = 1; cols <= 1025; ++cols) {
      const int s = span_rows(cols, kN);
      EXPECT_EQ(s, kN / gcd(cols, kN)) << "cols " << cols << " kN " << kN;
      EXPECT_EQ(int64_t(s) * cols % kN, 0);
      for (int fewer = 1; fewer < s; ++fewer) EXPECT_NE(fewer * cols % kN, 0);
      EXPECT_EQ(span_vectors(cols, kN) * kN, int64_t(s) * cols);
    }
  }
  // The brief's table: bf16 (8 a vector) 8 / 4 / 2 rows for odd, 2 mod 4, 4 mod 8; f32 4 / 2.
  EXPECT_EQ(span_rows(255, 8), 8);
  EXPECT_EQ(span_rows(130, 8), 4);
  EXPECT_EQ(span_rows(252, 8), 2);
  EXPECT_EQ(span_rows(256, 8), 1);
  EXPECT_EQ(span_rows(255, 4), 4);
  EXPECT_EQ(span_rows(130, 4), 2);
  EXPECT_EQ(span_rows(252, 4), 1);
}

TEST(SoftmaxSpans, PathTakesRowsOffTheVectorWidthWithinItsSlots) {
  EXPECT_TRUE(span_path_applies(255, 8, kMaxSlots));   // 255 vectors: 8 slots
  EXPECT_TRUE(span_path_applies(255, 4, kMaxSlots));   // 255 vectors
  EXPECT_FALSE(span_path_applies(257, 8, kMaxSlots));  // 257 vectors: 9 slots
  EXPECT_FALSE(span_path_applies(64, 8, kMaxSlots));   // whole vectors: v05's vector path
  EXPECT_FALSE(span_path_applies(128, 4, kMaxSlots));
  EXPECT_FALSE(span_path_applies(7, 8, kMaxSlots));  // shorter than a vector
  EXPECT_FALSE(span_path_applies(3, 4, kMaxSlots));
  EXPECT_FALSE(span_path_applies(31, 8, kMaxSlots));  // 31 vectors: lanes left idle
  EXPECT_TRUE(span_path_applies(33, 8, kMaxSlots));
  EXPECT_EQ(slots_for(255), 8);
  EXPECT_EQ(slots_for(256), 8);
  EXPECT_EQ(slots_for(257), 9);
  EXPECT_EQ(slots_for(33), 2);
}

// Every vector of every span v06 takes: its first row and split match a count of its elements,
// it touches at most two rows (the second inside the span), and both lie inside its slot's
// compile-time row window.
TEST(SoftmaxSpans, VectorsLieInTheirRowsAndSlotWindows) {
  int spans_checked = 0;
  for (int kN : {4, 8}) {
    for (int cols = 1; cols <= 1024; ++cols) {
      if (!span_path_applies(cols, kN, kMaxSlots)) continue;
      ++spans_checked;
      const int S = span_rows(cols, kN);
      const int V = static_cast<int>(span_vectors(cols, kN));
      const int J = slots_for(V);
      ASSERT_GE(J, 1);
      ASSERT_LE(J, kMaxSlots);
      for (int v = 0; v < V; ++v) {
        const VectorRows vr = vector_rows(v, cols, kN);
        int in_first = 0;
        for (int i = 0; i < kN; ++i) {
          const int row = (v * kN + i) / cols;
          ASSERT_TRUE(row == vr.row || row == vr.row + 1) << cols << " " << v;
          ASSERT_LT(row, S);
          in_first += row == vr.row;
        }
        ASSERT_EQ(in_first, vr.split) << "cols " << cols << " vector " << v;
        ASSERT_GE(vr.split, 1);
        const int j = v / 32;
        const int last_row = vr.split < kN ? vr.row + 1 : vr.row;
        ASSERT_GE(vr.row, slot_first_row(S, J, j)) << "cols " << cols << " vector " << v;
        ASSERT_LE(last_row, slot_last_row(S, J, j)) << "cols " << cols << " vector " << v;
      }
    }
  }
  EXPECT_GT(spans_checked, 500);
}

// The windows are what make v06 cheap: at S = J = 8 (255 bf16) each slot touches two rows.
TEST(SoftmaxSpans, SlotWindowsAtTheHeadlineShape) {
  for (int j = 0; j < 7; ++j) {
    EXPECT_EQ(slot_first_row(8, 8, j), j);
    EXPECT_EQ(slot_last_row(8, 8, j), j + 1);
  }
  EXPECT_EQ(slot_first_row(8, 8, 7), 7);
  EXPECT_EQ(slot_last_row(8, 8, 7), 7);
  EXPECT_EQ(slot_first_row(4, 1, 0), 0);  // one slot: every row
  EXPECT_EQ(slot_last_row(4, 1, 0), 3);
}
