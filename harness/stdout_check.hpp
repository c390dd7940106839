#pragma once
// Results printed to a full or closed standard output (`> /dev/full`) are lost:
// that is an error, said on stderr, never a silent exit 0.
#include <iostream>

namespace benchfp::harness {

// `status`, or 2 when standard output could not be written.
inline int checked_stdout(int status) {
    std::cout.flush();
    if (std::cout) return status;
    std::cerr << "benchfp: cannot write to standard output (full or closed): the results are lost\n";
    return 2;
}

}  // namespace benchfp::harness
