// The end of a run across processes (core/train/run/run_end.h): a rank is
// done only when every other rank has said it is and its own word has
// left, saying it twice sends once, and a peer that fails instead counts
// as heard (its failure is its own to report).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/comm/inproc_transport.h"
#include "core/comm/mailbox.h"
#include "core/train/run/run_end.h"

namespace st::train {
namespace {

bool eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(RunEndHandshake, DoneOnlyWhenEveryOtherRankHasSaidSo) {
  comm::InProcFabric fabric(3);
  std::vector<std::unique_ptr<comm::Mailbox>> mailboxes;
  std::vector<std::unique_ptr<RunEndHandshake>> ends;
  for (int r = 0; r < 3; ++r) mailboxes.push_back(std::make_unique<comm::Mailbox>(fabric.endpoint(r)));
  for (int r = 0; r < 3; ++r) ends.push_back(std::make_unique<RunEndHandshake>(fabric.endpoint(r), *mailboxes[r], r, 3));
  ends[0]->announce();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(ends[0]->everyone_done());  // ranks 1 and 2 have not said so yet
  ends[1]->announce();
  ends[1]->announce();  // once only: a second word would wait in the mailbox for ever
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(ends[0]->everyone_done());
  EXPECT_FALSE(ends[2]->everyone_done());  // heard from both, but has not said so itself
  ends[2]->announce();
  EXPECT_TRUE(eventually([&] { return ends[0]->everyone_done() && ends[1]->everyone_done() && ends[2]->everyone_done(); }));
  EXPECT_EQ(mailboxes[0]->buffered_messages(), 0u);
  for (auto& end : ends) EXPECT_EQ(end->failed_peers(), 0);
  fabric.shutdown();
}

TEST(RunEndHandshake, APeerThatFailsCountsAsHeard) {
  comm::InProcFabric fabric(2);
  comm::Mailbox mailbox(fabric.endpoint(0));
  RunEndHandshake end(fabric.endpoint(0), mailbox, 0, 2);
  end.announce();
  EXPECT_FALSE(end.everyone_done());
  fabric.fail(1);
  EXPECT_TRUE(eventually([&] { return end.everyone_done(); }));
  EXPECT_EQ(end.failed_peers(), 1);
  fabric.shutdown();
}

}  // namespace
}  // namespace st::train
