// Tests ThrowIfAny (util/error_list.h): the message layout and that a
// repeated message is reported once. Expected strings written by hand from
// the header's contract.
#include "t5xx/util/error_list.h"

#include <gtest/gtest.h>

namespace t5xx {
namespace {

std::string MessageOf(const std::vector<std::string>& errors) {
  try {
    ThrowIfAny(errors, "the test configuration");
  } catch (const Error& e) {
    return e.what();
  }
  return "<nothing thrown>";
}

TEST(ErrorList, NoneOneAndMany) {
  EXPECT_EQ(MessageOf({}), "<nothing thrown>");
  EXPECT_EQ(MessageOf({"a is bad"}), "a is bad");
  EXPECT_EQ(MessageOf({"a is bad", "b is bad"}),
            "2 errors in the test configuration:\n  a is bad\n  b is bad");
}

TEST(ErrorList, RepeatedMessagesOnce) {
  EXPECT_EQ(MessageOf({"corpus missing", "corpus missing"}), "corpus missing");
  EXPECT_EQ(MessageOf({"corpus missing", "b is bad", "corpus missing"}),
            "2 errors in the test configuration:\n  corpus missing\n  b is bad");
}

}  // namespace
}  // namespace t5xx
