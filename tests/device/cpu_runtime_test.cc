// device/cpu_runtime.h: the cgroup CPU quota, the usable cores and the
// --intra_op_threads flag. The cgroup trees are written to a temporary
// directory in the layouts the kernel documents (cgroup v2: cpu.max holds
// "<quota|max> <period>" in microseconds; v1: cpu.cfs_quota_us, -1 for none,
// and cpu.cfs_period_us), so the expected core counts are quota / period by
// hand.
#include "t5xx/device/cpu_runtime.h"

#include <gtest/gtest.h>

#include <sched.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "t5xx/util/error.h"

namespace t5xx::device {
namespace {

namespace fs = std::filesystem;

class CgroupTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("t5xx_cgroup_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  std::string Root() const { return root_.string(); }
  std::string Path(const std::string& rel) const { return (root_ / rel).string(); }
  fs::path root_;
};

TEST_F(CgroupTree, V2QuotaIsQuotaOverPeriod) {
  Write("proc_cgroup", "0::/job/step\n");
  Write("fs/job/step/cpu.max", "150000 100000\n");  // 1.5 cores
  auto q = CgroupCpuQuotaCores(Path("fs"), Path("proc_cgroup"));
  ASSERT_TRUE(q.has_value());
  EXPECT_DOUBLE_EQ(*q, 1.5);
}

TEST_F(CgroupTree, V2TakesTheSmallestQuotaUpTheTree) {
  Write("proc_cgroup", "0::/job/step\n");
  Write("fs/job/step/cpu.max", "max 100000\n");  // unlimited itself
  Write("fs/job/cpu.max", "300000 100000\n");     // 3 cores for the parent
  Write("fs/cpu.max", "max 100000\n");
  auto q = CgroupCpuQuotaCores(Path("fs"), Path("proc_cgroup"));
  ASSERT_TRUE(q.has_value());
  EXPECT_DOUBLE_EQ(*q, 3.0);
}

TEST_F(CgroupTree, V2UnlimitedIsNoQuota) {
  Write("proc_cgroup", "0::/\n");
  Write("fs/cpu.max", "max 100000\n");
  EXPECT_FALSE(CgroupCpuQuotaCores(Path("fs"), Path("proc_cgroup")).has_value());
}

TEST_F(CgroupTree, V1CfsQuota) {
  Write("proc_cgroup", "4:memory:/x\n2:cpu,cpuacct:/docker/abc\n1:name=systemd:/\n");
  Write("fs/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "250000\n");  // 2.5 cores
  Write("fs/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  auto q = CgroupCpuQuotaCores(Path("fs"), Path("proc_cgroup"));
  ASSERT_TRUE(q.has_value());
  EXPECT_DOUBLE_EQ(*q, 2.5);
}

TEST_F(CgroupTree, V1MinusOneIsNoQuota) {
  Write("proc_cgroup", "2:cpu,cpuacct:/\n");
  Write("fs/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  Write("fs/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  EXPECT_FALSE(CgroupCpuQuotaCores(Path("fs"), Path("proc_cgroup")).has_value());
}

TEST_F(CgroupTree, MissingFilesAreNoQuota) {
  EXPECT_FALSE(CgroupCpuQuotaCores(Path("nothing"), Path("no_such_file")).has_value());
}

TEST(UsableCoreCount, AtMostTheAffinityMask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  const int n = UsableCoreCount();
  EXPECT_GE(n, 1);
  EXPECT_LE(n, CPU_COUNT(&set));
}

TEST(TakeIntraOpThreadsFlag, TakesTheFlagOutOfTheArguments) {
  std::vector<std::string> args = {"--gin_file=a.gin", "--intra_op_threads=3", "--x=1"};
  EXPECT_EQ(TakeIntraOpThreadsFlag(args), 3);
  EXPECT_EQ(args, (std::vector<std::string>{"--gin_file=a.gin", "--x=1"}));
  std::vector<std::string> none = {"--gin_file=a.gin"};
  EXPECT_EQ(TakeIntraOpThreadsFlag(none), 0);
  EXPECT_EQ(none.size(), 1u);
}

TEST(TakeIntraOpThreadsFlag, RejectsWhatIsNotAPositiveCount) {
  for (const std::string bad : {"0", "-2", "two", "", "3x"}) {
    std::vector<std::string> args = {"--intra_op_threads=" + bad};
    try {
      TakeIntraOpThreadsFlag(args);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const t5xx::Error& e) {
      EXPECT_NE(std::string(e.what()).find("--intra_op_threads='" + bad + "'"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace t5xx::device
