// core/train/node/control_agent: which density and batches a node uses at
// each iteration once plans reach it over a real (in-process) transport.
// A plan switches the batches at its effective iteration on every node; a
// plan with density_from lets the density start at the first iteration
// this node has not begun, never within one.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/comm/inproc_transport.h"
#include "core/comm/mailbox.h"
#include "core/control/plan.h"
#include "core/runtime/executor.h"
#include "core/telemetry/metered_transport.h"
#include "core/telemetry/node_telemetry.h"
#include "core/train/node/control_agent.h"

namespace st::train {
namespace {

// Rank 1's agent, with rank 0's end of the fabric left to the test, which
// sends the plans a controller would.
class Rank1Agent : public ::testing::Test {
 protected:
  Rank1Agent()
      : fabric_(2),
        executor_(runtime::make_thread_pool_executor(1)),
        metered_(fabric_.endpoint(1), *executor_),
        mailbox_(metered_),
        agent_(1, 2, *executor_, metered_, mailbox_, nullptr, 0.05, {64}, nullptr) {
    agent_.start([] {});
  }
  ~Rank1Agent() override { fabric_.shutdown(); }

  // Sends the plan as rank 0 does and waits until the agent has applied
  // it: until the density at `check` becomes `expect`.
  void deliver(const control::Plan& plan, int check, double expect) {
    fabric_.endpoint(0).send(1, telemetry::kPlanTag, control::encode(plan), nullptr);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (agent_.density_at(check) != expect && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_EQ(agent_.density_at(check), expect) << "the plan was not applied";
  }

  comm::InProcFabric fabric_;
  std::unique_ptr<runtime::Executor> executor_;
  telemetry::MeteredTransport metered_;
  comm::Mailbox mailbox_;
  ControlAgent agent_;
};

TEST_F(Rank1Agent, APlanSwitchesEverythingAtItsEffectiveIteration) {
  agent_.begin_iteration(4);
  control::Plan plan{7, 0.2, {{60}, {68}}, "why"};
  deliver(plan, 7, 0.2);
  EXPECT_EQ(agent_.density_at(6), 0.05);
  EXPECT_EQ(agent_.batch_at(6), std::vector<int>{64});
  EXPECT_EQ(agent_.batch_at(7), std::vector<int>{68});
}

// density_from 5 while iteration 4 runs here: the density from 5, the
// batches still from 7. A later plan with a drain, arriving during 5,
// drains from 6 (its density_from 3 is past) over the earlier plan's
// batches until its own effective iteration.
TEST_F(Rank1Agent, TheDensityStartsAtTheNextIterationNotBegunHere) {
  agent_.begin_iteration(4);
  control::Plan first{7, 0.2, {{60}, {68}}, "first"};
  first.density_from = 5;
  deliver(first, 5, 0.2);
  EXPECT_EQ(agent_.density_at(4), 0.05);
  EXPECT_EQ(agent_.batch_at(5), std::vector<int>{64});
  EXPECT_EQ(agent_.density_at(7), 0.2);
  EXPECT_EQ(agent_.batch_at(7), std::vector<int>{68});

  agent_.begin_iteration(5);
  control::Plan drain{9, 0.1, {{62}, {66}}, "drain"};
  drain.density_from = 3;
  drain.drain_iterations = 4;
  drain.drain_density = 0.001;
  deliver(drain, 6, 0.001);
  EXPECT_EQ(agent_.density_at(5), 0.2) << "an iteration already begun keeps its density";
  EXPECT_EQ(agent_.batch_at(6), std::vector<int>{64});
  EXPECT_EQ(agent_.batch_at(7), std::vector<int>{68}) << "the first plan's batches still hold until the drain plan's";
  EXPECT_EQ(agent_.density_at(9), 0.001);
  EXPECT_EQ(agent_.batch_at(9), std::vector<int>{66});
  EXPECT_EQ(agent_.density_at(10), 0.1);
  EXPECT_EQ(agent_.batch_at(10), std::vector<int>{66});
}

// The batches must switch together: a plan whose effective iteration this
// node has begun stops the run, with or without an early density.
TEST_F(Rank1Agent, APlanForAnIterationBegunStillFails) {
  agent_.begin_iteration(8);
  control::Plan late{7, 0.2, {{60}, {68}}, "late"};
  late.density_from = 5;
  fabric_.endpoint(0).send(1, telemetry::kPlanTag, control::encode(late), nullptr);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  try {
    executor_->run_until([deadline] { return std::chrono::steady_clock::now() > deadline; });
    ADD_FAILURE() << "the late plan did not stop the run";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("a plan for iteration 7 arrived after iteration 8 began"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(agent_.density_at(9), 0.05) << "a late plan changed nothing";
}

}  // namespace
}  // namespace st::train
