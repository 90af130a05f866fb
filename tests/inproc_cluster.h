#pragma once
// W ranks in one test process: the in-process fabric, one mailbox and
// communicator per rank, one shared thread-pool executor. Shared by the
// collective tests and the DDP hooks' ring tests.
#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

#include "core/collective/communicator.h"
#include "core/comm/inproc_transport.h"
#include "core/comm/mailbox.h"
#include "core/runtime/executor.h"

namespace st::fixtures {

class InProcCluster {
 public:
  explicit InProcCluster(int world, comm::LinkDelay delay = {}, uint64_t seed = 1)
      : executor_(runtime::make_thread_pool_executor(2)),
        fabric_(std::make_unique<comm::InProcFabric>(world, delay, seed)) {
    for (comm::Rank r = 0; r < world; ++r) {
      mailboxes_.push_back(std::make_unique<comm::Mailbox>(fabric_->endpoint(r)));
      comms_.push_back(
          std::make_unique<collective::Communicator>(fabric_->endpoint(r), *mailboxes_[r], *executor_));
    }
  }
  // The fabric's delivery thread stops first, while everything it may call
  // is alive; then the executor's threads, whose tasks may still be sending
  // (a collective that failed on one rank ends the test while another
  // rank's task is in the middle of a send: ThreadSanitizer saw that send
  // read an endpoint the fabric was deleting); then the fabric itself.
  ~InProcCluster() {
    fabric_->shutdown();
    executor_.reset();
    fabric_.reset();
  }
  InProcCluster(const InProcCluster&) = delete;
  InProcCluster& operator=(const InProcCluster&) = delete;

  int world() const { return static_cast<int>(comms_.size()); }
  collective::Communicator& comm(comm::Rank r) { return *comms_[static_cast<std::size_t>(r)]; }
  comm::InProcFabric& fabric() { return *fabric_; }

  // Drives the executor until `count` callbacks have run; false on timeout.
  bool wait(const std::atomic<int>& finished, int count, std::chrono::seconds limit = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    executor_->run_until([&] { return finished.load() >= count || std::chrono::steady_clock::now() > deadline; });
    return finished.load() >= count;
  }

 private:
  std::unique_ptr<runtime::Executor> executor_;
  std::unique_ptr<comm::InProcFabric> fabric_;
  std::vector<std::unique_ptr<comm::Mailbox>> mailboxes_;
  std::vector<std::unique_ptr<collective::Communicator>> comms_;
};

}  // namespace st::fixtures
