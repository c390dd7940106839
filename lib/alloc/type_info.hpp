#pragma once
// What the profiler records as an allocation's type: a name, known where the
// allocation site knows its type, "unknown" where it does not (generated code).
#include <string>
#include <typeinfo>

namespace benchfp::alloc {

struct TypeInfo {
    std::string name;
};

inline const TypeInfo unknown_type{"unknown"};

std::string demangled(const char* mangled);

template <typename T>
const TypeInfo& type_of() {
    static const TypeInfo info{demangled(typeid(T).name())};
    return info;
}

}  // namespace benchfp::alloc
