#pragma once
// What the profiler records as an allocation's type: a name, known where the
// allocation site knows its type, "unknown" where it does not (generated code).
#include <string>
#include <typeinfo>

namespace benchfp::alloc {

// `name` is typeid's (mangled): whoever shows it demangles it (the export's
// Naming; the harness passes perf::demangle), so lib/alloc has no demangler.
struct TypeInfo {
    std::string name;
};

inline const TypeInfo unknown_type{"unknown"};

template <typename T>
const TypeInfo& type_of() {
    static const TypeInfo info{typeid(T).name()};
    return info;
}

}  // namespace benchfp::alloc
