#include <gtest/gtest.h>

#include "klab/core/errors.hpp"
#include "klab/core/shape.hpp"

using namespace klab;

TEST(Shape, Parses) {
  const Shape s = parse_shape("m=4096,n=1,k=17");
  EXPECT_EQ(s.at("m"), 4096);
  EXPECT_EQ(s.at("n"), 1);
  EXPECT_EQ(s.str(), "m=4096,n=1,k=17");
}

TEST(Shape, RejectsBadText) {
  for (const char* bad : {"", "m", "m=", "=4", "m=4,", "m=4,,n=2", "m=x", "m=4.5", "m=-3",
                          "m=4,m=5", "m=99999999999999999999", "m=1e3", "m-4"})
    EXPECT_THROW(parse_shape(bad), UsageError) << bad;
}

TEST(Shape, ZeroParsesForTheFamilyToJudge) { EXPECT_EQ(parse_shape("p=0").at("p"), 0); }

TEST(Shape, CheckedProductOverflows) {
  EXPECT_EQ(checked_product({1000, 1000, 1000}, "x"), 1000000000);
  EXPECT_THROW(checked_product({int64_t(1) << 40, int64_t(1) << 30}, "x"), UsageError);
}
