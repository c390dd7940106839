#pragma once
// Reading a fuzzer's bytes as typed fields, front to back; past the end every
// read yields zeros, so a target never needs to check the size first.
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <string>

namespace benchfp::fuzz {

class Input {
public:
    Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}

    template <typename T>
    T take() {
        T value{};
        const size_t n = std::min(sizeof(T), size_ - pos_);
        std::memcpy(&value, data_ + pos_, n);
        pos_ += n;
        return value;
    }
    // Up to `max` bytes as a string (its length taken from the input first).
    std::string take_string(size_t max) {
        const size_t n = std::min<size_t>(take<uint8_t>() % (max + 1), size_ - pos_);
        std::string out(reinterpret_cast<const char*>(data_ + pos_), n);
        pos_ += n;
        return out;
    }
    std::string rest() {
        std::string out(reinterpret_cast<const char*>(data_ + pos_), size_ - pos_);
        pos_ = size_;
        return out;
    }
    bool empty() const { return pos_ >= size_; }

private:
    const uint8_t* data_;
    size_t size_, pos_ = 0;
};

}  // namespace benchfp::fuzz
