#pragma once
#include <stdexcept>

namespace benchfp::harness {

// Bad usage or bad input: the harness prints the message and exits with status 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace benchfp::harness
