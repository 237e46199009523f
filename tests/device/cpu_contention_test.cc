// JudgeContention's rule on hand numbers (threads, cores, CPU seconds), and
// CpuUseBetween's differences.
#include "t5xx/device/cpu_contention.h"

#include <gtest/gtest.h>

namespace t5xx::device {
namespace {

CpuUse Use(double wall, double own, double others, int threads, int cores) {
  CpuUse u;
  u.wall_seconds = wall;
  u.process_cpu_seconds = own;
  u.others_cpu_seconds = others;
  u.threads = threads;
  u.cores = cores;
  return u;
}

TEST(CpuContentionTest, QuietWhenOwnThreadsRanAndOthersStayedOff) {
  // 2 threads on 2 cores for 0.5 s: 0.97 CPU-s of 1.0 possible, others 0.02.
  const ContentionVerdict v = JudgeContention(Use(0.5, 0.97, 0.02, 2, 2));
  EXPECT_FALSE(v.busy);
  EXPECT_NE(v.reason.find("1.94 of its 2 threads' cores"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("0.04 of the 2 cores"), std::string::npos) << v.reason;
}

TEST(CpuContentionTest, BusyWhenOwnThreadsWaitedForCores) {
  // 1.7 of 2 cores: below 0.9 * 2 = 1.8.
  EXPECT_TRUE(JudgeContention(Use(1.0, 1.7, 0.0, 2, 2)).busy);
  // Exactly 90% is still quiet (the rule is "<").
  EXPECT_FALSE(JudgeContention(Use(1.0, 1.8, 0.0, 2, 2)).busy);
  // More threads than cores: judged against the cores (1.85 >= 0.9 * 2).
  EXPECT_FALSE(JudgeContention(Use(1.0, 1.85, -1, 4, 2)).busy);
  // One thread that ran 82% of the time beside a busy neighbour (seen on
  // this 2-core machine: the other core's 1.16 cores of others spilled
  // onto ours).
  EXPECT_TRUE(JudgeContention(Use(1.0, 0.82, 1.16, 1, 2)).busy);
}

TEST(CpuContentionTest, BusyWhenOthersUsedMoreThanTheSpareCores) {
  // All cores ours: others may use at most 0.25 core.
  EXPECT_FALSE(JudgeContention(Use(1.0, 1.9, 0.25, 2, 2)).busy);
  EXPECT_TRUE(JudgeContention(Use(1.0, 1.9, 0.5, 2, 2)).busy);
  // 1 thread on 4 cores leaves 3 spare: 2.5 cores of others is fine, 3.5 not.
  EXPECT_FALSE(JudgeContention(Use(1.0, 0.95, 2.5, 1, 4)).busy);
  EXPECT_TRUE(JudgeContention(Use(1.0, 0.95, 3.5, 1, 4)).busy);
}

TEST(CpuContentionTest, UnknownOthersAndZeroWall) {
  const ContentionVerdict v = JudgeContention(Use(1.0, 1.9, -1, 2, 2));
  EXPECT_FALSE(v.busy);
  EXPECT_EQ(v.reason.find("other processes"), std::string::npos) << v.reason;
  EXPECT_FALSE(JudgeContention(Use(0.0, 0.0, 5.0, 2, 2)).busy);
}

TEST(CpuContentionTest, CpuUseBetweenSubtractsOwnTimeFromTheCoresBusyTime) {
  CpuClocks a, b;
  a.wall = 10.0;
  a.process_cpu = 5.0;
  a.cores_busy = 100.0;
  b.wall = 11.0;
  b.process_cpu = 6.9;
  b.cores_busy = 102.5;
  const CpuUse u = CpuUseBetween(a, b, 2, 2);
  EXPECT_DOUBLE_EQ(u.wall_seconds, 1.0);
  EXPECT_DOUBLE_EQ(u.process_cpu_seconds, 1.9);
  EXPECT_DOUBLE_EQ(u.others_cpu_seconds, 0.6);  // 2.5 - 1.9
  b.cores_busy = -1;                            // /proc/stat unreadable
  EXPECT_EQ(CpuUseBetween(a, b, 2, 2).others_cpu_seconds, -1);
  // Tick rounding can make the cores' busy time smaller than ours: 0, not negative.
  b.cores_busy = 101.8;
  EXPECT_EQ(CpuUseBetween(a, b, 2, 2).others_cpu_seconds, 0);
}

TEST(CpuContentionTest, ClocksOfThisMachine) {
  const CpuClocks a = ReadCpuClocks();
  volatile double x = 0;
  for (int i = 0; i < 20000000; ++i) x = x + 1e-9;  // some CPU time
  const CpuClocks b = ReadCpuClocks();
  EXPECT_GT(b.wall, a.wall);
  EXPECT_GT(b.process_cpu, a.process_cpu);
  EXPECT_GE(a.cores_busy, 0);  // Linux: /proc/stat is readable
  EXPECT_GE(AffinityCoreCount(), 1);
}

}  // namespace
}  // namespace t5xx::device
