#include "source_tree.hpp"

namespace benchfp::harness {

std::optional<std::filesystem::path> locate_stored(const std::string& name, StoredKind kind) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto found = [&](const fs::path& p) {
        return kind == StoredKind::regular_file ? fs::is_regular_file(p, ec) : fs::exists(p, ec);
    };
    const fs::path given(name);
    if (found(given) || (kind == StoredKind::any && given.is_absolute())) return given;
    const fs::path in_tree = fs::path(BENCHFP_SOURCE_DIR) / name;
    if (found(in_tree)) return in_tree;
    return std::nullopt;
}

}  // namespace benchfp::harness
