// Fuzz target: the parsers of package-manager output (dpkg-query, apt-mark, pip freeze,
// npm ls --parseable, flatpak, snap) and of a stored list file; the first byte picks one.
// Every parsed line must render and parse back unchanged.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "capture/packages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace haven::capture;
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<std::string> lines;
  switch (data[0] % 7) {
    case 0: lines = ParseDpkgQuery(text); break;
    case 1: lines = ParseNameList(text); break;
    case 2: lines = ParsePipFreeze(text); break;
    case 3: lines = ParseNpmParseable(text); break;
    case 4: lines = ParseFlatpakColumns(text); break;
    case 5: lines = ParseSnapList(text); break;
    default: lines = ParsePackageList(text); break;
  }
  for (const auto& l : lines)
    for (unsigned char c : l)
      if (c == '\n' || c == '\r') std::abort();
  std::string rendered = RenderPackageList(lines);
  if (RenderPackageList(ParsePackageList(rendered)) != rendered) {
    std::fprintf(stderr, "list does not round-trip\n");
    std::abort();
  }
  (void)InstallCommand("dpkg.txt", lines);
  (void)InstallCommand("pip.txt", lines);
  return 0;
}
