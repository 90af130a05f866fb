#pragma once
// An owning pointer to a polymorphic value that copies by cloning, so a
// struct holding one (TrainConfig and its system's options) keeps value
// semantics. Hand-written because the standard's version
// (std::polymorphic) arrives only in C++26 and no library the project
// already uses has one; T needs `std::unique_ptr<T> clone() const`.
#include <memory>
#include <utility>

namespace st::util {

template <typename T>
class ClonePtr {
 public:
  ClonePtr() = default;
  explicit ClonePtr(std::unique_ptr<T> value) : value_(std::move(value)) {}
  ClonePtr(const ClonePtr& other) : value_(other.value_ ? other.value_->clone() : nullptr) {}
  ClonePtr(ClonePtr&&) noexcept = default;
  ClonePtr& operator=(const ClonePtr& other) {
    if (this != &other) value_ = other.value_ ? other.value_->clone() : nullptr;
    return *this;
  }
  ClonePtr& operator=(ClonePtr&&) noexcept = default;

  T* get() const { return value_.get(); }
  T& operator*() const { return *value_; }
  T* operator->() const { return value_.get(); }
  explicit operator bool() const { return static_cast<bool>(value_); }

 private:
  std::unique_ptr<T> value_;
};

}  // namespace st::util
