// UserCacheDir: $XDG_CACHE_HOME/t5xx, else $HOME/.cache/t5xx, else an error.
#include "t5xx/util/system/user_cache_dir.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "t5xx/util/error.h"
#include "scoped_env.h"

namespace t5xx {
namespace {

using t5xx::testing::ScopedEnv;

TEST(UserCacheDirTest, XdgCacheHomeFirstThenHome) {
  ScopedEnv home("HOME", "/home/u");
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
    EXPECT_EQ(UserCacheDir(), "/x/cache/t5xx");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "");  // empty counts as unset (XDG spec)
    EXPECT_EQ(UserCacheDir(), "/home/u/.cache/t5xx");
  }
  ScopedEnv xdg("XDG_CACHE_HOME", std::nullopt);
  EXPECT_EQ(UserCacheDir(), "/home/u/.cache/t5xx");
}

TEST(UserCacheDirTest, NeitherSetIsAnErrorNamingBoth) {
  ScopedEnv home("HOME", std::nullopt);
  ScopedEnv xdg("XDG_CACHE_HOME", std::nullopt);
  try {
    UserCacheDir();
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("XDG_CACHE_HOME"), std::string::npos) << m;
    EXPECT_NE(m.find("HOME"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace t5xx
