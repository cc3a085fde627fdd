// Replays every file of a directory through LLVMFuzzerTestOneInput, for compilers without
// libFuzzer (CTest runs it with g++ on fuzz/corpus/safetensors). A crash or an uncaught
// exception fails the run; so does an empty or missing directory, which would test nothing.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(argv[1], ec)) {
    std::fprintf(stderr, "lowbit_fuzz_replay: %s is not a directory\n", argv[1]);
    return 1;
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(argv[1], ec))
    if (e.is_regular_file()) files.push_back(e.path());
  if (ec || files.empty()) {
    std::fprintf(stderr, "lowbit_fuzz_replay: no files in %s\n", argv[1]);
    return 1;
  }
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                     std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "lowbit_fuzz_replay: cannot read %s\n", path.c_str());
      return 1;
    }
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::printf("lowbit_fuzz_replay: %zu inputs replayed from %s\n", files.size(), argv[1]);
  return 0;
}
