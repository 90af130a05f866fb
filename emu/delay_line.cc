#include "emu/delay_line.h"
#include "emu/monotonic_clock.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <linux/netfilter.h>  // NF_ACCEPT, NF_DROP
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

extern "C" {
#include <libnetfilter_queue/libnetfilter_queue.h>
}

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <future>
#include <queue>
#include <random>
#include <vector>

#include "emu/netns.h"
#include "emu/realtime_thread.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif
#ifndef NETLINK_NO_ENOBUFS
#define NETLINK_NO_ENOBUFS 5
#endif

namespace st::emu {
namespace {

struct Held {
  int64_t due_ns = 0;
  uint64_t order = 0;  // arrival order: equal due times leave first-come first-served
  uint32_t id = 0;
  bool operator>(const Held& other) const {
    return due_ns != other.due_ns ? due_ns > other.due_ns : order > other.order;
  }
};

uint64_t loss_threshold(double loss) {
  // A 64-bit draw below this is a drop.
  const double clamped = std::clamp(loss, 0.0, 1.0);
  return clamped >= 1.0 ? UINT64_MAX : static_cast<uint64_t>(clamped * 18446744073709551615.0);
}

}  // namespace

class DelayLine::Impl {
 public:
  explicit Impl(const DelayLineOptions& options)
      : options_(options),
        delay_ns_(static_cast<int64_t>(std::llround(options.delay_ms * 1e6))),
        loss_threshold_(loss_threshold(options.loss)),
        random_(options.seed),
        stop_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (!stop_) throw EmuError(fmt::format("delay line: eventfd: {}", std::strerror(errno)));
    std::promise<std::string> ready;
    auto bound = ready.get_future();
    thread_ = std::thread([this, &ready] { run(ready); });
    const std::string error = bound.get();
    if (!error.empty()) {
      thread_.join();
      throw EmuError(error);
    }
  }

  ~Impl() {
    const uint64_t one = 1;
    if (write(stop_.get(), &one, sizeof(one)) < 0) {
      // The thread also stops when the eventfd cannot be written: never here.
    }
    if (thread_.joinable()) thread_.join();
  }

  void set(double delay_ms, double loss) {
    delay_ns_ = static_cast<int64_t>(std::llround(delay_ms * 1e6));
    loss_threshold_ = loss_threshold(loss);
  }

  DelayLineStats stats() const {
    return {accepted_.load(), lost_.load(), late_.load(), static_cast<double>(worst_late_ns_.load()) / 1e6};
  }

 private:
  std::string where() const { return fmt::format("delay line (NFQUEUE {} in {})", options_.queue, options_.netns); }

  static int on_packet(nfq_q_handle* queue, nfgenmsg*, nfq_data* data, void* self_pointer) {
    auto* self = static_cast<Impl*>(self_pointer);
    const nfqnl_msg_packet_hdr* header = nfq_get_msg_packet_hdr(data);
    if (header == nullptr) return 0;
    const uint32_t id = ntohl(header->packet_id);
    const uint64_t threshold = self->loss_threshold_.load();
    if (threshold > 0 && self->random_() <= threshold) {
      nfq_set_verdict(queue, id, NF_DROP, 0, nullptr);
      ++self->lost_;
      return 0;
    }
    self->held_.push(Held{monotonic_ns() + self->delay_ns_.load(), self->order_++, id});
    return 0;
  }

  // Every packet whose time has come (all of them when `everything`).
  void release(bool everything) {
    const int64_t now = monotonic_ns();
    while (!held_.empty() && (everything || held_.top().due_ns <= now)) {
      if (!everything) note_lateness(now - held_.top().due_ns);
      nfq_set_verdict(queue_, held_.top().id, NF_ACCEPT, 0, nullptr);
      held_.pop();
      ++accepted_;
    }
  }

  void note_lateness(int64_t late_ns) {
    constexpr int64_t kLateNs = 1'000'000;
    if (late_ns >= kLateNs) ++late_;
    if (late_ns > worst_late_ns_.load()) worst_late_ns_ = late_ns;
  }

  void bind() {
    handle_ = nfq_open();
    if (handle_ == nullptr)
      throw EmuError(fmt::format("{}: nfq_open: {} (the kernel needs NFQUEUE support, CONFIG_NETFILTER_NETLINK_QUEUE)",
                                 where(), std::strerror(errno)));
    // Deprecated no-ops on current kernels, needed on old ones; failures do not matter.
    nfq_unbind_pf(handle_, AF_INET);
    nfq_bind_pf(handle_, AF_INET);
    queue_ = nfq_create_queue(handle_, options_.queue, &Impl::on_packet, this);
    if (queue_ == nullptr)
      throw EmuError(fmt::format("{}: cannot bind the queue: {} (is another program bound to it?)", where(),
                                 std::strerror(errno)));
    if (nfq_set_mode(queue_, NFQNL_COPY_META, 0) < 0)
      throw EmuError(fmt::format("{}: cannot set copy mode META", where()));
    if (nfq_set_queue_maxlen(queue_, options_.max_packets) < 0)
      throw EmuError(fmt::format("{}: cannot set the queue length to {}", where(), options_.max_packets));
    // Whole GSO packets instead of their segments: fewer verdicts, same timing.
    nfq_set_queue_flags(queue_, NFQA_CFG_F_GSO, NFQA_CFG_F_GSO);
    const int fd = nfq_fd(handle_);
    const int buffer = 16 << 20;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof(buffer)) != 0)
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
    const int one = 1;
    setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one));
  }

  void run(std::promise<std::string>& ready) {
    prctl(PR_SET_TIMERSLACK, 1UL);  // wake up on time, not up to 50 us late
    run_ahead_of_processes();  // emu/realtime_thread.h
    std::unique_ptr<NetnsScope> inside;
    try {
      inside = std::make_unique<NetnsScope>(options_.netns);
      bind();
    } catch (const std::exception& e) {
      close_queue();
      ready.set_value(e.what());
      return;
    }
    ready.set_value("");
    std::vector<char> buffer(1 << 18);
    pollfd fds[2] = {{nfq_fd(handle_), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
    for (;;) {
      release(false);
      timespec timeout{};
      timespec* wait = nullptr;
      if (!held_.empty()) {
        const int64_t left = std::max<int64_t>(0, held_.top().due_ns - monotonic_ns());
        timeout.tv_sec = static_cast<time_t>(left / 1'000'000'000);
        timeout.tv_nsec = static_cast<long>(left % 1'000'000'000);
        wait = &timeout;
      }
      fds[0].revents = fds[1].revents = 0;
      if (ppoll(fds, 2, wait, nullptr) < 0 && errno != EINTR) break;
      if (fds[1].revents != 0) break;
      if (fds[0].revents == 0) continue;
      for (;;) {
        const ssize_t length = recv(fds[0].fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
        if (length < 0) break;  // EAGAIN: drained (ENOBUFS is switched off)
        nfq_handle_packet(handle_, buffer.data(), static_cast<int>(length));
      }
    }
    release(true);
    close_queue();
  }

  void close_queue() {
    if (queue_ != nullptr) nfq_destroy_queue(queue_);
    if (handle_ != nullptr) nfq_close(handle_);
    queue_ = nullptr;
    handle_ = nullptr;
  }

  DelayLineOptions options_;
  std::atomic<int64_t> delay_ns_;
  std::atomic<uint64_t> loss_threshold_;
  std::mt19937_64 random_;
  UniqueFd stop_;
  std::thread thread_;
  nfq_handle* handle_ = nullptr;
  nfq_q_handle* queue_ = nullptr;
  std::priority_queue<Held, std::vector<Held>, std::greater<Held>> held_;
  uint64_t order_ = 0;
  std::atomic<uint64_t> accepted_{0};
  std::atomic<uint64_t> lost_{0};
  std::atomic<uint64_t> late_{0};
  std::atomic<int64_t> worst_late_ns_{0};  // written by the thread only
};

DelayLine::DelayLine(const DelayLineOptions& options) : impl_(std::make_unique<Impl>(options)) {}
DelayLine::~DelayLine() = default;
void DelayLine::set(double delay_ms, double loss) { impl_->set(delay_ms, loss); }
DelayLineStats DelayLine::stats() const { return impl_->stats(); }

}  // namespace st::emu
