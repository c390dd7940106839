// report::write_file: the atomic writer every result, baseline and report goes through.
#include "report/file.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;
using benchfp::report::write_file;

namespace {

std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

mode_t mode_of(const fs::path& p) {
    struct stat st{};
    EXPECT_EQ(::stat(p.c_str(), &st), 0);
    return st.st_mode & 07777;
}

size_t entries(const fs::path& dir) { return static_cast<size_t>(std::distance(fs::directory_iterator(dir), {})); }

}  // namespace

TEST(ReportFile, NewFileGetsTheUmaskModeAndNoTemporaryStays) {
    const benchfp::test::ScratchDir dir("benchfp_file_test_");  // empty at the test's start, removed at its end
    const mode_t mask = ::umask(022);
    write_file(dir.path() / "a.json", "{}\n");
    ::umask(mask);
    EXPECT_EQ(read(dir.path() / "a.json"), "{}\n");
    EXPECT_EQ(mode_of(dir.path() / "a.json"), 0644u);
    EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(ReportFile, ReplacedFileKeepsItsMode) {
    const benchfp::test::ScratchDir dir("benchfp_file_test_");  // empty at the test's start, removed at its end
    write_file(dir.path() / "a", "old");
    ASSERT_EQ(::chmod((dir.path() / "a").c_str(), 0640), 0);
    write_file(dir.path() / "a", "new");
    EXPECT_EQ(read(dir.path() / "a"), "new");
    EXPECT_EQ(mode_of(dir.path() / "a"), 0640u);
}

TEST(ReportFile, SymbolicLinkIsWrittenThroughAndStaysALink) {
    const benchfp::test::ScratchDir dir("benchfp_file_test_");  // empty at the test's start, removed at its end
    write_file(dir.path() / "target", "old");
    fs::create_symlink("target", dir.path() / "link");
    write_file(dir.path() / "link", "new");
    EXPECT_TRUE(fs::is_symlink(dir.path() / "link"));
    EXPECT_EQ(read(dir.path() / "target"), "new");
    EXPECT_EQ(entries(dir.path()), 2u);
}

TEST(ReportFile, DanglingLinkAndDirectoryAreErrorsNamingThePath) {
    const benchfp::test::ScratchDir dir("benchfp_file_test_");  // empty at the test's start, removed at its end
    fs::create_symlink("nowhere/x", dir.path() / "dangling");
    try {
        write_file(dir.path() / "dangling", "x");
        FAIL() << "a dangling link was written";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("dangling"), std::string::npos) << e.what();
    }
    EXPECT_THROW(write_file(dir.path().string(), "x"), std::runtime_error);
    EXPECT_THROW(write_file((dir.path() / "no-such-dir" / "x").string(), "x"), std::runtime_error);
    EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(ReportFile, DevicesAreWrittenInPlaceWithErrorsChecked) {
    EXPECT_NO_THROW(write_file("/dev/null", "x"));
    EXPECT_THROW(write_file("/dev/full", "x"), std::runtime_error);
    EXPECT_EQ(benchfp::report::write_fully(-1, "x"), EBADF);
}

TEST(ReportFile, AFifoWithNoReaderIsAnErrorNotAHang) {
    const benchfp::test::ScratchDir dir("benchfp_file_test_");  // empty at the test's start, removed at its end
    const fs::path fifo = dir.path() / "fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_THROW(write_file(fifo.string(), "x"), std::runtime_error);
}

TEST(ReportFile, AFileSetIsWrittenWholeOrNotAtAll) {
    const benchfp::test::ScratchDir dir("benchfp_file_test_");  // empty at the test's start, removed at its end
    fs::create_directories(dir.path() / "a");
    fs::create_directories(dir.path() / "b");
    write_file(dir.path() / "a" / "one", "old one");
    write_file(dir.path() / "b" / "two", "old two");
    // The third file's write fails (/dev/full) after the first two temporaries are written.
    EXPECT_THROW(benchfp::report::write_files({{(dir.path() / "a" / "one").string(), "new one"},
                                               {(dir.path() / "b" / "two").string(), "new two"},
                                               {"/dev/full", "x"}}),
                 std::runtime_error);
    EXPECT_EQ(read(dir.path() / "a" / "one"), "old one");
    EXPECT_EQ(read(dir.path() / "b" / "two"), "old two");
    EXPECT_EQ(entries(dir.path() / "a"), 1u);  // no temporary stays
    EXPECT_EQ(entries(dir.path() / "b"), 1u);
    // A file whose directory is missing: the same.
    EXPECT_THROW(benchfp::report::write_files({{(dir.path() / "a" / "one").string(), "new one"},
                                               {(dir.path() / "no-such-dir" / "x").string(), "x"}}),
                 std::runtime_error);
    EXPECT_EQ(read(dir.path() / "a" / "one"), "old one");
    EXPECT_EQ(entries(dir.path() / "a"), 1u);
    benchfp::report::write_files(
        {{(dir.path() / "a" / "one").string(), "new one"}, {(dir.path() / "b" / "two").string(), "new two"}});
    EXPECT_EQ(read(dir.path() / "a" / "one"), "new one");
    EXPECT_EQ(read(dir.path() / "b" / "two"), "new two");
}

TEST(ReportFile, CheckWritableAsksTheFileSystemNotTheModeBits) {
    const benchfp::test::ScratchDir dir("benchfp_file_test_");  // empty at the test's start, removed at its end
    EXPECT_NO_THROW(benchfp::report::check_writable((dir.path() / "new.json").string()));
    EXPECT_EQ(entries(dir.path()), 0u);  // the probe is removed
    // sysfs takes no new file even from root, whom access() lets through.
    if (fs::is_directory("/sys/kernel")) {
        try {
            benchfp::report::check_writable("/sys/kernel/benchfp-probe.json");
            FAIL() << "a file in /sys/kernel passed the check";
        } catch (const std::runtime_error& e) {
            EXPECT_NE(std::string(e.what()).find("/sys/kernel/benchfp-probe.json"), std::string::npos) << e.what();
        }
    }
}

// make_directories says what it made, and remove_made_directories takes back
// exactly that: never a directory that was there, never a link, never one that
// holds a file.
TEST(ReportFile, DirectoriesMadeAreTakenBackAndNothingElse) {
    using benchfp::report::make_directories;
    using benchfp::report::remove_made_directories;
    const benchfp::test::ScratchDir dir("benchfp_file_test_");  // empty at the test's start, removed at its end
    const fs::path there = dir.path() / "there";
    fs::create_directories(there);
    // A trailing slash, and a ".." through a directory the call itself makes.
    for (const std::string& asked : {(there / "a/b/").string(), (there / "n/../e/sub").string()}) {
        const auto made = make_directories(asked, "test");
        EXPECT_TRUE(fs::is_directory(asked)) << asked;
        EXPECT_FALSE(made.empty()) << asked;
        remove_made_directories(made);
        EXPECT_EQ(entries(there), 0u) << asked;  // all of it back, and `there` itself kept
    }
    EXPECT_TRUE(fs::is_directory(there));
    EXPECT_TRUE(make_directories(there.string(), "test").empty());  // there already: nothing made
    // A dangling link where the directory would go: an error, and the link stays.
    const fs::path link = dir.path() / "dangling";
    fs::create_symlink(dir.path() / "nowhere", link);
    EXPECT_THROW(make_directories(link.string(), "test"), std::runtime_error);
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
    // A directory that came to hold a file stays, and so do its parents.
    const auto made = make_directories((there / "x/y").string(), "test");
    std::ofstream(there / "x/y/kept") << "k";
    remove_made_directories(made);
    EXPECT_TRUE(fs::exists(there / "x/y/kept"));
}
